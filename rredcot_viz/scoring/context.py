"""``TraceContext``: one trace under one model and prompt, with its token ids, regions, and cached scores.

All model scoring of the engine goes through ``ensure``: it finds the (series, prefix) pairs that are not in
the cache yet and computes all of them, plus the trace's token stats when missing, in one call of the
prefix-reuse scorer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rredcot_viz.model.backends import Sampler, build_sampler
from rredcot_viz.model.core import DEFAULT_SYSTEM_PROMPT, ProgressFn
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.packing import Continuation
from rredcot_viz.scoring.cache import BoundaryCache
from rredcot_viz.scoring.plan import ResponseTokens, TargetPlanner, item_key, plan_items
from rredcot_viz.segmenters.base import SegmenterInput
from rredcot_viz.segmenters.scope import Scope
from rredcot_viz.settings import Settings, setting
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost, ScoreItem, ScoreSeries, TokenStats, content_key

__all__ = ["PromptConfig", "ScoreItem", "TraceContext"]


@dataclass(frozen=True)
class PromptConfig(Settings):
    """How the question becomes the prompt (a trace's own raw ``prompt`` always wins)."""

    system_prompt: str | None = setting(DEFAULT_SYSTEM_PROMPT, "system message put before the question (none: the "
                                        "model's own default)", advanced=True)  # fmt: skip
    chat_template: bool = setting(True, "wrap the question in the model's chat template (off: the raw question)")


class TraceContext:
    def __init__(
        self,
        trace: Trace,
        lm: LanguageModel,
        prompt: PromptConfig,
        cache: BoundaryCache,
        sampler: Sampler | None = None,
    ):
        self.trace = trace
        self.lm = lm
        self.cache = cache
        self.sampler = sampler or build_sampler(lm)  # where rollouts from this trace's states are drawn
        if trace.prompt is not None:
            self.prompt_text = trace.prompt
        else:
            self.prompt_text = lm.format_prompt(trace.question, system=prompt.system_prompt, chat=prompt.chat_template)
        self.prompt_ids = lm.encode_prompt(self.prompt_text)
        self.response = ResponseTokens.from_text(lm, trace.cot)
        self.ids = self.prompt_ids + list(self.response.ids)
        self.key = content_key(trace.content_hash, lm.fingerprint, self.prompt_text)
        self._tokens: dict[str, tuple[int, ...]] = {}
        self._hidden: dict[int, np.ndarray] = {}  # state prefix -> (L+1, D), what a value probe reads
        cache.describe(self.key, trace.content_hash, lm.name, lm.fingerprint, self.prompt_text, lm.quantization)

    # ------------------------------------------------------------------ regions
    @property
    def n_response_tokens(self) -> int:
        return len(self.response.ids)

    def region_tokens(self, scope: Scope) -> int:
        """Number of response tokens in the segmented region (the final state's prefix length)."""
        return self.response.region_tokens(scope)

    def region_text(self, scope: Scope) -> str:
        return self.response.region_text(scope)

    def segmenter_input(self, scope: Scope, *, with_entropies: bool = True) -> SegmenterInput:
        """The region as segmenters see it; without entropies (zeros) for text-only candidate cuts."""
        spans = tuple(self.trace.step_spans()) if self.trace.steps is not None else None
        return self.response.segmenter_input(scope, self.score_stats().entropies if with_entropies else None, spans)

    # ------------------------------------------------------------------ scores
    @property
    def has_stats(self) -> bool:
        return self.cache.stats(self.key) is not None

    def score_stats(self) -> TokenStats:
        """Per-token log-probs and entropies of the response: runs the model (one forward pass) when they are not
        in the cache yet, so segmenters that read entropies can cut."""
        if not self.has_stats:
            self.ensure([], [], need_stats=True)
        stats = self.cache.stats(self.key)
        assert stats is not None
        return stats

    def hidden_states(self, prefixes: Iterable[int]) -> np.ndarray:
        """Every layer's hidden state at the last token of each state ``prefix`` (response tokens; the prompt's
        last token for 0): (L+1, P, D). One forward pass over the trace for the prefixes not seen yet (no token
        sampled or scored, metered as ``hidden_states``), kept with this context so another K reuses it."""
        prefixes = list(prefixes)
        if not prefixes:
            return self.lm.hidden_states(self.ids, [])
        todo = sorted(set(prefixes) - set(self._hidden))
        if todo:
            start = len(self.prompt_ids)
            found = self.lm.hidden_states(self.ids, [start + prefix - 1 for prefix in todo])
            for column, prefix in enumerate(todo):
                self._hidden[prefix] = found[:, column]
        return np.stack([self._hidden[prefix] for prefix in prefixes], axis=1)

    def _ids(self, text: str) -> tuple[int, ...]:
        if text not in self._tokens:
            self._tokens[text] = tuple(self.lm.encode(text))
        return self._tokens[text]

    def series_key(self, series: ScoreSeries) -> str:
        """The cache key of a series whose target is the same at every state."""
        return item_key(series.context, series.target)

    def items(
        self, series: list[ScoreSeries], prefixes: Iterable[int], estimator: TargetPlanner | None = None
    ) -> dict[str, list[ScoreItem]]:
        """The shared scoring plan (``scoring.plan.plan_items``): per series, one item per sorted prefix.
        Per-state series need the ``estimator`` that names their target at each state."""
        return plan_items(estimator, self, series, sorted(set(prefixes)), self._ids)

    def ensure(
        self,
        series: list[ScoreSeries],
        prefixes: Iterable[int],
        *,
        estimator: TargetPlanner | None = None,
        need_stats: bool = False,
        progress: ProgressFn | None = None,
    ) -> CallCost:
        """Compute every missing (series, prefix) pair (and the stats if asked and missing) in one call."""
        items = [item for row in self.items(series, prefixes, estimator).values() for item in row]
        return self.ensure_items(items, need_stats=need_stats, progress=progress)

    def ensure_items(
        self, items: list[ScoreItem], *, need_stats: bool = False, progress: ProgressFn | None = None
    ) -> CallCost:
        """Score every item not in the cache yet (and the stats if asked and missing) in one packed call. Results
        enter the cache (and its store) as each packed chunk finishes: a cancelled call keeps what it scored."""
        missing = self.missing_items(items)
        stats_start = len(self.prompt_ids) if need_stats and not self.has_stats else None
        if not missing and stats_start is None:
            return CallCost()
        requests = [Continuation(len(self.prompt_ids) + item.prefix, item.context, item.target) for item in missing]

        def keep(members: list[int], logprobs: list[np.ndarray]) -> None:
            by_key: dict[str, dict[int, np.ndarray]] = {}
            for member, scores in zip(members, logprobs, strict=True):
                by_key.setdefault(missing[member].key, {})[missing[member].prefix] = scores
            for key, scores in by_key.items():
                self.cache.put_scores(self.key, key, scores)

        result = self.lm.score_continuations(
            self.ids,
            requests,
            stats_start=stats_start,
            progress=progress,
            on_stats=lambda stats: self.cache.put_stats(self.key, stats),
            on_chunk=keep,
            operation="engine",
        )
        return result.cost

    def missing_items(self, items: list[ScoreItem]) -> list[ScoreItem]:
        """The items not in the cache yet, each (series, prefix) once."""
        missing = [item for item in items if item.prefix not in self.cache.series(self.key, item.key)]
        return list({(item.key, item.prefix): item for item in missing}.values())

    def item_scores(self, items: list[ScoreItem], progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Target log-probs of each item (computed in one call if missing)."""
        self.ensure_items(items, progress=progress)
        return [self.cache.series(self.key, item.key)[item.prefix] for item in items]

    def scores(
        self, series: list[ScoreSeries], prefixes: Iterable[int], estimator: TargetPlanner | None = None
    ) -> dict[str, list[np.ndarray]]:
        """Per series name, the target log-probs after each prefix (in the order given)."""
        prefixes = list(prefixes)
        plan = self.items(series, prefixes, estimator)
        self.ensure_items([item for row in plan.values() for item in row])
        by_prefix = {name: {item.prefix: item for item in row} for name, row in plan.items()}
        return {name: [self.cache.series(self.key, by_prefix[name][p].key)[p] for p in prefixes] for name in by_prefix}
