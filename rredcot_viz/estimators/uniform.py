"""``uniform``: the GRPO baseline, the outcome spread evenly over the segments (sigma_t = R / K), so every
view can show what outcome-only credit would assign. Values V_t = R (t - 1) / K; no model calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.estimators.base import ValueEstimator, estimators
from rredcot_viz.types import StateValues

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@estimators.register("uniform")
class UniformEstimator(ValueEstimator):
    name = "uniform"
    provenance = "GRPO outcome advantage broadcast to every token"
    uses_model = False
    fallback_note = "this trace states no answer to score, so the curve is flat credit."

    def state_values(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        self.check(context.trace)
        k = segmentation.k
        values = context.trace.outcome * np.arange(k + 1) / k
        return StateValues(self.name, values)
