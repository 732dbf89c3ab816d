"""``loo`` detector (METHOD.md §8.1): with the reference answer as target, the earliest segment whose removal
raises log p(reference answer) by more than ``threshold`` nats (a segment that hurts); else the segment whose
removal raises it most; -1 when no removal raises it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.attribution import attributions
from rredcot_viz.comparison import attribute_cached
from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.lm import ProgressFn
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace


@dataclass(frozen=True)
class LooDetectorConfig(DetectorConfig):
    threshold: float = 0.1  # tau_loo, in log-prob units
    trigger: str | None = None  # answer trigger (None: by trace style)


@detectors.register("loo")
class LooDetector(Detector):
    name = "loo"
    Config = LooDetectorConfig

    def detect(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        segmentation = self.segmentation(analyzer, trace, segmenter)
        loo = attribute_cached(
            analyzer,
            trace,
            segmentation,
            attributions.get("loo")(target="reference", trigger=self.config.trigger),
            progress,
        )
        phi = loo.scores  # phi_t < 0: removing segment t raises the reference answer's log-prob
        hurts = np.flatnonzero(phi < -self.config.threshold)
        if len(hurts):
            prediction = int(hurts[0])
        elif (phi < 0).any():
            prediction = int(np.argmin(phi))
        else:
            prediction = NO_ERROR
        return FirstError(self.name, prediction, -phi, evidence={"loo": phi.tolist()}, cost=loo.cost)
