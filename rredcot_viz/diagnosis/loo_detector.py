"""``loo`` detector (docs/method.md §8.1): the earliest segment that *hurts* by more than ``threshold`` nats, else the
one that hurts most; -1 when none hurts.

Which answer it reads (``target``): with a reference answer, a segment hurts when removing it raises
log p(reference answer). With none (``auto`` picks ``own``), the target is the trace's own answer: on a failed
trace a segment hurts when it *supports* that wrong answer (removing it lowers its log-prob), i.e. credit for
"what led to the answer it gave"; on a correct trace its own answer is the right one, so the reference rule
applies. ``own`` needs the outcome label to know which rule holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from rredcot_viz.attribution.cached import attribute_cached
from rredcot_viz.attribution.loo import LeaveOneOut
from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.settings import setting
from rredcot_viz.traces.needs import missing

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace

Target = Literal["auto", "reference", "own"]
TARGETS: tuple[Target, ...] = get_args(Target)
TARGET_NEEDS = {"reference": ("reference_answer",), "own": ("answer", "outcome")}


@dataclass(frozen=True)
class LooDetectorConfig(DetectorConfig):
    threshold: float = setting(0.1, "tau_loo: a step hurts when removing it moves the target's log-prob by more "
                               "than this (nats)", low=0.0)  # fmt: skip
    trigger: str | None = setting(None, "answer trigger (none: by trace style)", advanced=True)
    target: Target = setting("auto", "the answer read: the reference answer, the trace's own, or auto (reference "
                             "when the trace has one)")  # fmt: skip


@detectors.register("loo")
class LooDetector(Detector):
    name = "loo"
    Config = LooDetectorConfig

    def mode(self, trace: Trace) -> str:
        if self.config.target != "auto":
            return self.config.target
        return "reference" if trace.reference_answer else "own"

    def missing(self, trace: Trace) -> list[str]:
        return missing(trace, TARGET_NEEDS[self.mode(trace)])

    def locate(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        self.check(trace)
        target = self.mode(trace)
        segmentation = self.segmentation(analyzer, trace, segmenter)
        loo = attribute_cached(
            analyzer,
            trace,
            segmentation,
            LeaveOneOut(target=target, trigger=self.config.trigger),
            progress,
        )
        phi = loo.values  # phi_t > 0: segment t raises the target answer's log-prob
        supports_wrong = target == "own" and trace.outcome is not None and trace.outcome < 0.5
        hurt = phi if supports_wrong else -phi
        hurts = np.flatnonzero(hurt > self.config.threshold)
        if len(hurts):
            prediction = int(hurts[0])
        elif (hurt > 0).any():
            prediction = int(np.argmax(hurt))
        else:
            prediction = NO_ERROR
        evidence = {"loo": phi.tolist(), "target": target}
        return FirstError(self.name, prediction, hurt, evidence=evidence)
