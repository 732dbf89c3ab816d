"""The attribution interface: one score per segment for a target answer (docs/method.md §7).

The set function is f(S) = log p(A | x ‖ segments in S, in order ‖ trigger), summed over A's tokens.
Removed segments are deleted. Every f(S) is evaluated as a continuation of the trace itself: the trace up
to the first removed segment is reused from the KV cache and only the kept segments after it, the trigger
and the answer are packed after it, so LOO and Shapley cost far less than re-encoding each subset.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from rredcot_viz.errors import ConfigError, MissingReferenceError
from rredcot_viz.estimators.rredcot import PLAIN_TRIGGER, THINKING_TRIGGER, scoring_form
from rredcot_viz.model.meter import measure
from rredcot_viz.registry import Registry
from rredcot_viz.settings import Settings, setting, with_overrides
from rredcot_viz.traces.answers import last_number_note
from rredcot_viz.types import CallCost, ScoreItem, ScoreSeries, content_key

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@dataclass
class SegmentScores:
    method: str
    values: np.ndarray  # (K,) phi[i] belongs to segment t = i + 1; > 0 means the segment raises the target
    stderr: np.ndarray | None = None
    checks: dict[str, float] = field(default_factory=dict)  # efficiency gap, completeness error, ...
    notes: list[str] = field(default_factory=list)
    cost: CallCost = field(default_factory=CallCost)


@dataclass(frozen=True)
class AttributionConfig(Settings):
    # own by default (docs/method.md §7, §11): the unconditioned attribution the RREDCoT paper contrasts with
    # redistribution; the reference answer is the conditioned alternative
    target: Literal["own", "reference"] = setting(
        "own",
        "the answer whose log-probability is attributed: the trace's own final answer (the unconditioned "
        "attribution the RREDCoT paper contrasts with redistribution), or the reference answer",
    )
    trigger: str | None = setting(None, "answer trigger (none: by trace style, as for R-hat)", advanced=True)


class Attribution(ABC):
    name: ClassVar[str]
    Config: ClassVar[type[AttributionConfig]] = AttributionConfig
    provenance: ClassVar[str] = "design choice (configurable)"

    def __init__(self, config: AttributionConfig | None = None, **overrides: Any):
        base = config or self.Config()
        if not isinstance(base, self.Config):
            raise ConfigError(f"{self.name} needs a {self.Config.__name__}, got {type(base).__name__}")
        self.config = with_overrides(base, f"attribution {self.name!r}", overrides)

    def attribute(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> SegmentScores:
        """One score per segment of ``segmentation``, with the cost of the model calls made for them."""
        with measure() as spent:
            scores = self.segment_scores(context, segmentation, progress)
        scores.cost = spent.cost
        if self.config.target == "own" and context.trace.final_answer is None:
            note = last_number_note(context.trace.cot)
            scores.notes.extend([note] if note else [])
        return scores

    @abstractmethod
    def segment_scores(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> SegmentScores:
        """What ``attribute`` returns; implemented by each attribution method."""

    # ------------------------------------------------------------------ the target and the set function
    def trigger(self, context: TraceContext) -> str:
        if self.config.trigger is not None:
            return self.config.trigger
        return THINKING_TRIGGER if "</think>" in context.trace.cot else PLAIN_TRIGGER

    def target(self, context: TraceContext) -> str:
        answer = context.trace.reference_answer if self.config.target == "reference" else context.trace.answer
        if not answer:
            what = "reference answer" if self.config.target == "reference" else "final answer of its own"
            raise MissingReferenceError(
                f"attribution {self.name!r} targets the trace's {what}, which this trace does not have; "
                f"use target={'own' if self.config.target == 'reference' else 'reference'}"
            )
        return scoring_form(answer) + "}"

    def subset_values(
        self,
        context: TraceContext,
        segmentation: Segmentation,
        subsets: list[tuple[int, ...]],
        progress: ProgressFn | None = None,
    ) -> dict[tuple[int, ...], float]:
        """f(S) for each subset (0-based segment indices, sorted), in one packed call."""
        trigger = self.trigger(context)
        target_text = self.target(context)
        trigger_ids, target_ids = tuple(context.lm.encode(trigger)), tuple(context.lm.encode(target_text))
        prefix_key = context.series_key(ScoreSeries("answer", trigger, target_text))  # shared with R-hat
        spans = [segment.token_span for segment in segmentation.segments]
        response = context.response.ids
        items = []
        for subset in subsets:
            kept = set(subset)
            missing = [i for i in range(len(spans)) if i not in kept]
            if not missing:
                items.append(ScoreItem(prefix_key, spans[-1][1], trigger_ids, target_ids))
                continue
            first = missing[0]
            after = [i for i in subset if i > first]
            if not after:  # a prefix of the trace: exactly R-hat's scoring at that state
                items.append(ScoreItem(prefix_key, spans[first][0], trigger_ids, target_ids))
                continue
            kept_ids = tuple(token for i in after for token in response[spans[i][0] : spans[i][1]])
            key = content_key("subset", trigger, target_text, [spans[i] for i in after])
            items.append(ScoreItem(key, spans[first][0], kept_ids + trigger_ids, target_ids))
        scores = context.item_scores(items, progress)
        return {subset: float(lp.sum()) for subset, lp in zip(subsets, scores, strict=True)}


attributions: Registry[type[Attribution]] = Registry("attribution")
