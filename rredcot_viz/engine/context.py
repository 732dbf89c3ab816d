"""``TraceContext``: one trace under one model and prompt, with its token ids, regions, and cached scores.

All model scoring of the engine goes through ``ensure``: it finds the (series, prefix) pairs that are not in
the cache yet and computes all of them, plus the trace's token stats when missing, in one call of the
prefix-reuse scorer.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rredcot_viz.engine.cache import BoundaryCache, content_key
from rredcot_viz.estimators.base import ScoreSeries
from rredcot_viz.model.lm import DEFAULT_SYSTEM_PROMPT, CallCost, LanguageModel, ProgressFn, TokenStats
from rredcot_viz.model.packing import Continuation
from rredcot_viz.segmenters.base import SegmenterInput
from rredcot_viz.segmenters.scope import Scope, reasoning_end
from rredcot_viz.traces.trace import Trace


@dataclass(frozen=True)
class ScoreItem:
    """Score ``target`` after the first ``prefix`` response tokens and then ``context`` (token ids);
    ``key`` names what is scored, so equal items share one cache entry."""

    key: str
    prefix: int
    context: tuple[int, ...]
    target: tuple[int, ...]


@dataclass(frozen=True)
class PromptConfig:
    """How the question becomes the prompt (a trace's own raw ``prompt`` always wins)."""

    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
    chat_template: bool = True


class TraceContext:
    def __init__(self, trace: Trace, lm: LanguageModel, prompt: PromptConfig, cache: BoundaryCache):
        self.trace = trace
        self.lm = lm
        self.cache = cache
        if trace.prompt is not None:
            self.prompt_text = trace.prompt
        else:
            self.prompt_text = lm.format_prompt(trace.question, system=prompt.system_prompt, chat=prompt.chat_template)
        self.prompt_ids = lm.encode_prompt(self.prompt_text)
        self.response = lm.encode_with_offsets(trace.cot)
        self.ids = self.prompt_ids + self.response.ids
        self.key = content_key(trace.content_hash, lm.fingerprint, self.prompt_text)
        self._tokens: dict[str, tuple[int, ...]] = {}
        cache.describe(self.key, trace.content_hash, lm.name, lm.fingerprint, self.prompt_text)

    # ------------------------------------------------------------------ regions
    @property
    def n_response_tokens(self) -> int:
        return len(self.response.ids)

    def region_tokens(self, scope: Scope) -> int:
        """Number of response tokens in the segmented region (the final state's prefix length)."""
        end = reasoning_end(self.trace.cot, scope)
        if end >= len(self.trace.cot):
            return self.n_response_tokens
        return max(bisect.bisect_right(self.response.starts, end) - 1, 1)

    def region_text(self, scope: Scope) -> str:
        tokens = self.region_tokens(scope)
        if tokens >= self.n_response_tokens:
            return self.trace.cot
        return self.trace.cot[: self.response.starts[tokens]]

    def segmenter_input(self, scope: Scope, *, with_entropies: bool = True) -> SegmenterInput:
        """The region as segmenters see it; without entropies (zeros) for text-only candidate cuts."""
        tokens = self.region_tokens(scope)
        entropies = self.stats.entropies[:tokens] if with_entropies else np.zeros(tokens)
        spans = None
        if self.trace.steps is not None:
            spans = tuple(self.trace.step_spans())
        return SegmenterInput(self.region_text(scope), tuple(self.response.starts[:tokens]), entropies, spans)

    # ------------------------------------------------------------------ scores
    @property
    def has_stats(self) -> bool:
        return self.cache.stats(self.key) is not None

    @property
    def stats(self) -> TokenStats:
        """Per-token log-probs and entropies of the response (computed on first use)."""
        if not self.has_stats:
            self.ensure([], [], need_stats=True)
        stats = self.cache.stats(self.key)
        assert stats is not None
        return stats

    def _ids(self, text: str) -> tuple[int, ...]:
        if text not in self._tokens:
            self._tokens[text] = tuple(self.lm.encode(text))
        return self._tokens[text]

    def series_key(self, series: ScoreSeries) -> str:
        return content_key(series.context, series.target)

    def items(self, series: list[ScoreSeries], prefixes: Iterable[int]) -> list[ScoreItem]:
        prefixes = sorted(set(prefixes))
        return [
            ScoreItem(self.series_key(s), p, self._ids(s.context), self._ids(s.target))
            for s in series
            for p in prefixes
        ]

    def ensure(
        self,
        series: list[ScoreSeries],
        prefixes: Iterable[int],
        *,
        need_stats: bool = False,
        progress: ProgressFn | None = None,
    ) -> CallCost:
        """Compute every missing (series, prefix) pair (and the stats if asked and missing) in one call."""
        return self.ensure_items(self.items(series, prefixes), need_stats=need_stats, progress=progress)

    def ensure_items(
        self, items: list[ScoreItem], *, need_stats: bool = False, progress: ProgressFn | None = None
    ) -> CallCost:
        """Score every item not in the cache yet (and the stats if asked and missing) in one packed call."""
        missing = [item for item in items if item.prefix not in self.cache.series(self.key, item.key)]
        missing = list({(item.key, item.prefix): item for item in missing}.values())
        stats_start = len(self.prompt_ids) if need_stats and not self.has_stats else None
        if not missing and stats_start is None:
            return CallCost()
        requests = [Continuation(len(self.prompt_ids) + item.prefix, item.context, item.target) for item in missing]
        result = self.lm.score_continuations(
            self.ids, requests, stats_start=stats_start, progress=progress, operation="engine"
        )
        if result.stats is not None:
            self.cache.put_stats(self.key, result.stats)
        by_key: dict[str, dict[int, np.ndarray]] = {}
        for item, logprobs in zip(missing, result.logprobs, strict=True):
            by_key.setdefault(item.key, {})[item.prefix] = logprobs
        for key, scores in by_key.items():
            self.cache.put_scores(self.key, key, scores)
        return result.cost

    def item_scores(self, items: list[ScoreItem], progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Target log-probs of each item (computed in one call if missing)."""
        self.ensure_items(items, progress=progress)
        return [self.cache.series(self.key, item.key)[item.prefix] for item in items]

    def scores(self, series: list[ScoreSeries], prefixes: Iterable[int]) -> dict[str, list[np.ndarray]]:
        """Per series name, the target log-probs after each prefix (in the order given)."""
        prefixes = list(prefixes)
        self.ensure(series, prefixes)
        return {item.name: [self.cache.series(self.key, self.series_key(item))[p] for p in prefixes] for item in series}
