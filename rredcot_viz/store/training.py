"""Training runs: their rows in ``runs`` (kind ``train``), per-step metrics and sampled rollouts."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from rredcot_viz.store.runs import RunStore

if TYPE_CHECKING:
    import pandas as pd


class TrainingStore(RunStore):
    """``train_metrics`` and ``train_rollouts``, and the named queries of training runs."""

    def put_train_metrics(self, run_id: str, step: int, metrics: dict[str, Any]) -> None:
        with self.cursor() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO train_metrics VALUES (?, ?, ?, ?)",
                [run_id, step, json.dumps(metrics, default=float), time.time()],
            )

    def train_metrics(self, run_ids: list[str]) -> pd.DataFrame:
        """One row per (run, step) with the metrics as columns."""
        import pandas as pd

        if not run_ids:
            return pd.DataFrame()
        marks = ", ".join("?" for _ in run_ids)
        with self.cursor() as cur:
            rows = cur.execute(
                f"SELECT run_id, step, metrics FROM train_metrics WHERE run_id IN ({marks}) ORDER BY run_id, step",
                run_ids,
            ).fetchall()
        return pd.DataFrame([{"run_id": r, **json.loads(m), "step": s} for r, s, m in rows])

    def put_train_rollouts(self, run_id: str, step: int, records: list[dict[str, Any]]) -> None:
        rows = [(run_id, step, i, json.dumps(record, default=float)) for i, record in enumerate(records)]
        with self.cursor() as cur:
            cur.executemany("INSERT OR REPLACE INTO train_rollouts VALUES (?, ?, ?, ?)", rows)

    def train_rollouts(self, run_id: str, step: int) -> list[dict[str, Any]]:
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT payload FROM train_rollouts WHERE run_id = ? AND step = ? ORDER BY idx", [run_id, step]
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def train_rollout_steps(self, run_id: str) -> list[int]:
        """The steps that stored rollouts (not every step does)."""
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT DISTINCT step FROM train_rollouts WHERE run_id = ? ORDER BY step", [run_id]
            ).fetchall()
        return [int(r[0]) for r in rows]

    def run_rollouts(self, run_id: str) -> list[tuple[int, dict[str, Any]]]:
        """(step, payload) of every rollout a run stored, by step and order."""
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT step, payload FROM train_rollouts WHERE run_id = ? ORDER BY step, idx", [run_id]
            ).fetchall()
        return [(int(step), json.loads(payload)) for step, payload in rows]

    def rollout_runs(self) -> pd.DataFrame:
        """Runs with stored rollouts (trained here or imported), newest first: id, kind, label (an imported
        run's name, a trained run's method), status, steps with rollouts and rollouts."""
        self.interrupt_runs()
        return self._query(
            "SELECT r.run_id, r.kind, coalesce(json_extract_string(r.settings, '$.label'), "
            "json_extract_string(r.settings, '$.method')) AS label, r.status, r.created_at, "
            "count(DISTINCT t.step) AS steps, count(*) AS rollouts "
            "FROM runs r JOIN train_rollouts t USING (run_id) GROUP BY ALL ORDER BY r.created_at DESC"
        )

    def training_runs(self) -> pd.DataFrame:
        """Training runs, newest first: id, method, status, base-model fingerprint, steps logged and planned."""
        self.interrupt_runs()
        runs = self._query(
            "SELECT r.run_id, json_extract_string(r.settings, '$.method') AS method, r.status, r.created_at, "
            "r.settings, r.model_fingerprint, max(m.step) AS steps_logged "
            "FROM runs r LEFT JOIN train_metrics m USING (run_id) "
            "WHERE r.kind = 'train' GROUP BY ALL ORDER BY r.created_at DESC"
        )
        runs["steps_planned"] = [json.loads(s).get("steps") for s in runs.pop("settings")]
        return runs

    def train_run(self, run_id: str) -> tuple[dict[str, Any], str] | None:
        """A training run's settings (its config as a dict) and the fingerprint of its base model; None if
        there is no training run ``run_id``."""
        with self.cursor() as cur:
            row = cur.execute(
                "SELECT settings, model_fingerprint FROM runs WHERE run_id = ? AND kind = 'train'", [run_id]
            ).fetchone()
        return (json.loads(row[0]), str(row[1])) if row else None
