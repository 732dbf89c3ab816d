"""The engine's persistent cache (``rredcot_viz.scoring.cache.CacheBackend``): everything a model computed
for a context (a trace under a model and prompt), looked up by content key before it is computed again."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from rredcot_viz.store.base import StoreBase
from rredcot_viz.types import Rollout, TokenStats


class ScoreStore(StoreBase):
    """Token stats, boundary scores, rollouts, contexts and attribution / verdict results."""

    def put_context(
        self, context_key: str, trace_hash: str, model_name: str, fingerprint: str, prompt: str, quantization: str
    ) -> None:
        """Say which trace, model (and its quantization) and prompt a context key stands for (the key is a hash)."""
        with self.writing() as cur:
            cur.execute(
                "INSERT OR IGNORE INTO contexts (context_key, trace_hash, model_name, model_fingerprint, prompt_text, "
                "created_at, quantization) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [context_key, trace_hash, model_name, fingerprint, prompt, time.time(), quantization],
            )

    def contexts(self, trace_hash: str | None = None) -> list[dict[str, Any]]:
        """The contexts scored so far (of one trace when given), oldest first: which models have seen a trace."""
        where, params = ("WHERE trace_hash = ?", [trace_hash]) if trace_hash is not None else ("", [])
        with self.cursor() as cur:
            rows = cur.execute(
                f"SELECT context_key, trace_hash, model_name, model_fingerprint, quantization FROM contexts {where} "
                "ORDER BY created_at, rowid",
                params,
            ).fetchall()
        names = ("context_key", "trace_hash", "model_name", "model_fingerprint", "quantization")
        return [dict(zip(names, row, strict=True)) for row in rows]

    def load_stats(self, context_key: str) -> TokenStats | None:
        with self.cursor() as cur:
            row = cur.execute(
                "SELECT logprobs, entropies FROM token_stats WHERE context_key = ?", [context_key]
            ).fetchone()
        return TokenStats(np.array(row[0]), np.array(row[1])) if row else None

    def save_stats(self, context_key: str, stats: TokenStats) -> None:
        with self.writing() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO token_stats VALUES (?, ?, ?, ?)",
                [context_key, stats.logprobs.tolist(), stats.entropies.tolist(), time.time()],
            )

    def load_scores(self, context_key: str, series_key: str) -> dict[int, np.ndarray]:
        """A series' target log-probs by prefix (boundary) index."""
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT prefix, logprobs FROM scores WHERE context_key = ? AND series_key = ?",
                [context_key, series_key],
            ).fetchall()
        return {int(prefix): np.array(logprobs) for prefix, logprobs in rows}

    def save_scores(self, context_key: str, series_key: str, scores: dict[int, np.ndarray]) -> None:
        now = time.time()
        rows = [(context_key, series_key, int(p), lp.tolist(), now) for p, lp in scores.items()]
        with self.writing() as cur:
            cur.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)", rows)

    def load_rollouts(self, context_key: str, sampling_key: str, prefix: int) -> list[Rollout]:
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT prefix, idx, seed, text, answer, correct, finish_reason, tokens FROM rollouts "
                "WHERE context_key = ? AND sampling_key = ? AND prefix = ? ORDER BY idx",
                [context_key, sampling_key, prefix],
            ).fetchall()
        return [Rollout(*row) for row in rows]

    def save_rollouts(self, context_key: str, sampling_key: str, rollouts: list[Rollout]) -> None:
        now = time.time()
        rows = [
            (
                context_key,
                sampling_key,
                r.prefix,
                r.index,
                r.seed,
                r.text,
                r.answer,
                r.correct,
                r.finish_reason,
                r.tokens,
                now,
            )
            for r in rollouts
        ]
        with self.writing() as cur:
            cur.executemany("INSERT OR REPLACE INTO rollouts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def put_result(
        self, result_key: str, context_key: str, kind: str, method: str, settings: dict, payload: dict, cost: dict
    ) -> None:
        """Store one method's output (an attribution, a verdict, a dataset record); the key names its run or
        its inputs, so the same computation is found again."""
        with self.writing() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    result_key,
                    context_key,
                    kind,
                    method,
                    json.dumps(settings, default=str),
                    json.dumps(payload),
                    json.dumps(cost),
                    time.time(),
                ],
            )

    def result(self, result_key: str) -> dict[str, Any] | None:
        with self.cursor() as cur:
            row = cur.execute("SELECT payload FROM results WHERE result_key = ?", [result_key]).fetchone()
        return json.loads(row[0]) if row else None
