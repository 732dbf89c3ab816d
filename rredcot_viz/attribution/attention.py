"""Attention attribution (docs/method.md §7.4): the attention the trigger and answer tokens pay to each segment,
averaged over all layers and heads (eager attention; SDPA and flash kernels return no weights)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rredcot_viz.attribution.base import Attribution, SegmentScores, attributions
from rredcot_viz.attribution.gradient import _per_segment, _sequence

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@attributions.register("attention")
class AttentionMass(Attribution):
    name = "attention"
    provenance = "design choice; Thought Anchors receiver heads are the documented alternative"

    def segment_scores(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> SegmentScores:
        ids, variable, target = _sequence(self, context, segmentation)
        trigger = context.lm.encode(self.trigger(context))
        queries = list(range(len(ids) - len(target) - len(trigger), len(ids)))
        received = context.lm.attention_to_keys(ids, queries)
        values = _per_segment(received[variable], segmentation)
        return SegmentScores(self.name, values)
