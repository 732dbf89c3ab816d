"""The all-boundary cache: model scores keyed by content, so re-segmenting never re-runs the model.

A *context key* identifies (trace content, model fingerprint, prompt text): everything that fixes the token
ids. Under it the cache keeps the trace's token stats and, per *series key* (the context and target texts
scored after a prefix), the per-token log-probs at every prefix length computed so far. Aggregations are
applied later, so switching them is free too. An optional backend (the DuckDB store) persists entries.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from rredcot_viz.types import Rollout, TokenStats


class CacheBackend(Protocol):
    """Persistent storage behind the in-memory cache (implemented by the DuckDB store)."""

    def load_stats(self, context_key: str) -> TokenStats | None: ...
    def save_stats(self, context_key: str, stats: TokenStats) -> None: ...
    def load_scores(self, context_key: str, series_key: str) -> dict[int, np.ndarray]: ...
    def save_scores(self, context_key: str, series_key: str, scores: dict[int, np.ndarray]) -> None: ...
    def load_rollouts(self, context_key: str, sampling_key: str, prefix: int) -> list[Rollout]: ...
    def save_rollouts(self, context_key: str, sampling_key: str, rollouts: list[Rollout]) -> None: ...
    def put_context(
        self, context_key: str, trace_hash: str, model_name: str, fingerprint: str, prompt: str, quantization: str
    ) -> None: ...
    def result(self, result_key: str) -> dict | None: ...
    def put_result(
        self, result_key: str, context_key: str, kind: str, method: str, settings: dict, payload: dict, cost: dict
    ) -> None: ...


@dataclass
class _Entry:
    stats: TokenStats | None = None
    scores: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)
    rollouts: dict[tuple[str, int], list[Rollout]] = field(default_factory=dict)
    results: dict[str, dict] = field(default_factory=dict)


class BoundaryCache:
    """In-memory LRU over context keys (most recent ``max_contexts`` traces), backed optionally."""

    def __init__(self, max_contexts: int = 64, backend: CacheBackend | None = None):
        self.max_contexts = max_contexts
        self.backend = backend
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._described: set[str] = set()

    def _entry(self, context_key: str) -> _Entry:
        entry = self._entries.get(context_key)
        if entry is None:
            entry = _Entry(stats=self.backend.load_stats(context_key) if self.backend else None)
            self._entries[context_key] = entry
            while len(self._entries) > self.max_contexts:
                self._entries.popitem(last=False)
        self._entries.move_to_end(context_key)
        return entry

    def stats(self, context_key: str) -> TokenStats | None:
        return self._entry(context_key).stats

    def put_stats(self, context_key: str, stats: TokenStats) -> None:
        self._entry(context_key).stats = stats
        if self.backend:
            self.backend.save_stats(context_key, stats)

    def series(self, context_key: str, series_key: str) -> dict[int, np.ndarray]:
        entry = self._entry(context_key)
        if series_key not in entry.scores:
            entry.scores[series_key] = self.backend.load_scores(context_key, series_key) if self.backend else {}
        return entry.scores[series_key]

    def put_scores(self, context_key: str, series_key: str, scores: dict[int, np.ndarray]) -> None:
        self.series(context_key, series_key).update(scores)
        if self.backend:
            self.backend.save_scores(context_key, series_key, scores)

    def rollouts(self, context_key: str, sampling_key: str, prefix: int) -> list[Rollout]:
        """Rollouts drawn so far from one state under one sampling setting, in index order."""
        entry = self._entry(context_key)
        key = (sampling_key, prefix)
        if key not in entry.rollouts:
            entry.rollouts[key] = self.backend.load_rollouts(context_key, sampling_key, prefix) if self.backend else []
        return entry.rollouts[key]

    def put_rollouts(self, context_key: str, sampling_key: str, rollouts: list[Rollout]) -> None:
        for rollout in rollouts:
            stored = self.rollouts(context_key, sampling_key, rollout.prefix)
            if rollout.index != len(stored):
                raise ValueError(f"rollout {rollout.index} at prefix {rollout.prefix} is out of order")
            stored.append(rollout)
        if self.backend:
            self.backend.save_rollouts(context_key, sampling_key, rollouts)

    def describe(
        self, context_key: str, trace_hash: str, model_name: str, fingerprint: str, prompt: str, quantization: str
    ) -> None:
        """Record what a context key stands for (so stored rows can be traced back to trace and model)."""
        if self.backend and context_key not in self._described:
            self.backend.put_context(context_key, trace_hash, model_name, fingerprint, prompt, quantization)
            self._described.add(context_key)

    def result(self, context_key: str, result_key: str) -> dict | None:
        """A stored method result (attribution scores, ...) by content key, or None."""
        entry = self._entry(context_key)
        if result_key not in entry.results and self.backend:
            stored = self.backend.result(result_key)
            if stored is not None:
                entry.results[result_key] = stored
        return entry.results.get(result_key)

    def put_result(
        self, context_key: str, result_key: str, kind: str, method: str, settings: dict, payload: dict, cost: dict
    ) -> None:
        self._entry(context_key).results[result_key] = payload
        if self.backend:
            self.backend.put_result(result_key, context_key, kind, method, settings, payload, cost)

    def clear(self) -> None:
        self._entries.clear()
