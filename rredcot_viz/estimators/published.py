"""``published_mc``: a trace's own published Monte Carlo values as an estimator, so they can be overlaid on
ours. Thought Anchors' ``accuracy[i]`` (about 100 rollouts of a larger model) is V(s_{i+1}); V_{K+1} := R.
The values belong to the trace's own steps, so the segmentation must be the ``given`` one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.errors import ConfigError, MissingReferenceError
from rredcot_viz.estimators.base import EstimatorConfig, ValueEstimator, estimators
from rredcot_viz.segmenters.base import steps_segmenter
from rredcot_viz.settings import setting
from rredcot_viz.types import StateValues

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@dataclass(frozen=True)
class PublishedConfig(EstimatorConfig):
    series: str = setting("mc_accuracy", "which of the trace's published per-step series to read")


@estimators.register("published_mc")
class PublishedValues(ValueEstimator):
    name = "published_mc"
    Config = PublishedConfig
    provenance = "the dataset's own MC values (Thought Anchors: ~100 resamples per chunk, a larger model)"
    uses_model = False
    needs = ("outcome", "step_values")
    live = False  # values exist only for the trace's own steps, which the live pages do not segment by default
    steps_only = True

    def state_values(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        self.check(context.trace)
        trace = context.trace
        published = trace.step_values.get(self.config.series)
        if published is None:
            raise MissingReferenceError(
                f"this trace has no published {self.config.series!r} values (it has: "
                f"{', '.join(trace.step_values) or 'none'}); import a Thought Anchors file to get them"
            )
        steps = steps_segmenter().name
        if segmentation.strategy != steps or segmentation.k != len(published):
            raise ConfigError(
                f"published values belong to the trace's own {len(published)} steps; use the {steps!r} segmenter "
                f"(got {segmentation.strategy} with K={segmentation.k})"
            )
        values = np.append(np.asarray(published, dtype=float), trace.outcome)
        return StateValues(self.name, values, {"V_published": values})
