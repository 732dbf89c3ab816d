"""Detectors that read a value curve (METHOD.md §8.1): ``min_sigma`` and ``value_drop``.

Both use RREDCoT by default (``estimator``), so on a failed trace the segment where Q-hat collapses is the
suspect; any registered estimator can be used instead (``mc`` gives the MC value-drop detector).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators import estimators

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.lm import ProgressFn
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace


@dataclass(frozen=True)
class MinSigmaConfig(DetectorConfig):
    threshold: float = 0.05  # tau_sigma
    variant: str = "argmin"  # or "first_below": the earliest sigma_t < -tau
    estimator: str = "rredcot"
    estimator_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.variant not in ("argmin", "first_below"):
            raise ConfigError(f"variant must be argmin or first_below, got {self.variant!r}")


def _analysis(detector: Detector, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None):
    estimator = estimators.get(detector.config.estimator)(**detector.config.estimator_options)
    return analyzer.analyze(trace, segmenter, estimator, progress)


@detectors.register("min_sigma")
class MinSigma(Detector):
    """The most negative redistributed reward (variant B sigma), if below -tau."""

    name = "min_sigma"
    Config = MinSigmaConfig

    def detect(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        result = _analysis(self, analyzer, trace, segmenter, progress)
        sigma = result.sigma
        below = np.flatnonzero(sigma < -self.config.threshold)
        if self.config.variant == "first_below":
            prediction = int(below[0]) if len(below) else NO_ERROR
        else:
            best = int(np.argmin(sigma))
            prediction = best if sigma[best] < -self.config.threshold else NO_ERROR
        return FirstError(self.name, prediction, -sigma, evidence={"sigma": sigma.tolist()}, cost=result.cost)


@dataclass(frozen=True)
class ValueDropConfig(DetectorConfig):
    mode: str = "delta"  # "delta": first V_{t+1} - V_t <= -delta; "absolute": first V_{t+1} < tau_abs
    delta: float = 0.2
    absolute: float = 0.5
    estimator: str = "rredcot"
    estimator_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in ("delta", "absolute"):
            raise ConfigError(f"mode must be delta or absolute, got {self.mode!r}")


@detectors.register("value_drop")
class ValueDrop(Detector):
    """The first boundary where the value falls by more than delta (or below tau_abs); the largest single
    drop is reported as evidence. The terminal value (the outcome) is part of the curve."""

    name = "value_drop"
    Config = ValueDropConfig

    def detect(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        result = _analysis(self, analyzer, trace, segmenter, progress)
        values = result.values.values
        drops = values[:-1] - values[1:]  # drop caused by segment t = value before minus value after
        if self.config.mode == "delta":
            hits = np.flatnonzero(drops >= self.config.delta)
        else:
            hits = np.flatnonzero(values[1:] < self.config.absolute)
        prediction = int(hits[0]) if len(hits) else NO_ERROR
        evidence = {
            "values": values.tolist(),
            "largest_drop_segment": int(np.argmax(drops)) + 1,
            "largest_drop": float(drops.max()),
        }
        return FirstError(self.name, prediction, drops, evidence=evidence, cost=result.cost)
