"""The first-error detector interface (docs/method.md §8): for a trace and a segmentation, the 0-based index of
the first erroneous segment (-1 = "no error"), a score per segment for the UI, and what it cost.

Index convention: segment t is stored as t - 1, the ProcessBench convention, so a prediction equals a
ProcessBench ``label`` when the segmentation is the trace's own steps (``given``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rredcot_viz.errors import ConfigError, MissingReferenceError, RredcotError
from rredcot_viz.model.meter import measure
from rredcot_viz.registry import Registry
from rredcot_viz.settings import Settings, with_overrides
from rredcot_viz.traces.needs import describe, missing
from rredcot_viz.types import CallCost

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.segmenters.base import Segmentation, Segmenter
    from rredcot_viz.traces.trace import Trace

NO_ERROR = -1
SRPO_LOCALISER = "self_localize"  # SRPO's own first-error localisation: where reset resampling cuts by default


@dataclass
class FirstError:
    detector: str
    prediction: int  # 0-based segment index, -1 = no error
    scores: np.ndarray  # (K,) higher = more suspicious
    abstained: bool = False  # counts as a miss in ProcessBench F1
    evidence: dict[str, Any] = field(default_factory=dict)
    cost: CallCost = field(default_factory=CallCost)  # what finding it cost, also when it comes from the cache
    cached: bool = False  # looked up, not computed now
    computed_at: float | None = None  # when a looked-up verdict was computed

    @property
    def segment(self) -> int | None:
        """1-based segment t, or None for "no error"."""
        return None if self.prediction == NO_ERROR else self.prediction + 1


@dataclass(frozen=True)
class DetectorConfig(Settings):
    """Base of every detector's config."""


class Detector(ABC):
    """Subclasses set ``name``, ``Config``, ``provenance``, declare ``needs`` (trace fields, ``traces.needs``) and
    ``uses`` (what it asks of the model: scoring, sampling) and implement ``locate`` (``detect`` measures its
    cost around it). A detector with reference-free options overrides ``mode`` (the option a trace gets) and
    ``missing``."""

    name: ClassVar[str]
    Config: ClassVar[type[DetectorConfig]] = DetectorConfig
    provenance: ClassVar[str] = "design choice (configurable)"
    needs: ClassVar[tuple[str, ...]] = ()
    uses: ClassVar[tuple[str, ...]] = ("scoring",)

    def __init__(self, config: DetectorConfig | None = None, **overrides: Any):
        base = config or self.Config()
        if not isinstance(base, self.Config):
            raise ConfigError(f"{self.name} needs a {self.Config.__name__}, got {type(base).__name__}")
        self.config = with_overrides(base, f"detector {self.name!r}", overrides)

    def missing(self, trace: Trace) -> list[str]:
        """What this detector (with its settings) needs and ``trace`` lacks; checked without the model."""
        return missing(trace, self.needs)

    def mode(self, trace: Trace) -> str | None:
        """The option this trace is diagnosed with (e.g. the estimator chosen by ``auto``), shown in tables."""
        return None

    def check(self, trace: Trace) -> None:
        lacking = self.missing(trace)
        if lacking:
            raise MissingReferenceError(
                f"detector {self.name!r} needs {describe(lacking)}, which this trace does not have"
            )

    def detect(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        """The first erroneous segment of ``trace`` under ``segmenter``'s segmentation, with the cost of the
        model calls made for it."""
        with measure() as spent:
            verdict = self.locate(analyzer, trace, segmenter, progress)
        verdict.cost = spent.cost
        return verdict

    @abstractmethod
    def locate(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        """What ``detect`` returns; implemented by each detector."""

    def detect_many(
        self, analyzer: Analyzer, traces: list[Trace], segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> list[FirstError | RredcotError]:
        """Verdicts for many traces (an error in place of a verdict where a trace cannot be diagnosed).
        Detectors that generate override this to batch their model calls across traces."""
        verdicts: list[FirstError | RredcotError] = []
        for done, trace in enumerate(traces, start=1):
            try:
                verdicts.append(self.detect(analyzer, trace, segmenter))
            except RredcotError as error:
                verdicts.append(error)
            if progress:
                progress(done, len(traces))
        return verdicts

    def segmentation(self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter) -> Segmentation:
        analyzer.context(trace).score_stats()  # entropies for the segmenter
        return analyzer.segment(trace, segmenter)


detectors: Registry[type[Detector]] = Registry("detector")
