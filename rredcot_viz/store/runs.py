"""Runs (one row per analysis, dataset or diagnosis run) and the results each run stored under its id.

A run's results are keyed ``{run_id}:{item}`` in ``results``, so a run is read back with one prefix query.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from rredcot_viz.store.base import StoreBase
from rredcot_viz.store.jobs import interrupt_dead

if TYPE_CHECKING:
    import pandas as pd

RUN_COLUMNS = (
    "run_id",
    "kind",
    "model_name",
    "model_fingerprint",
    "quantization",
    "dtype",
    "settings",
    "seed",
    "status",
    "summary",
    "cost",
    "created_at",
    "finished_at",
)
JSON_COLUMNS = {"settings", "summary", "cost"}


class RunStore(StoreBase):
    """The ``runs`` table and the named queries of dataset and diagnosis runs."""

    def put_run(
        self,
        run_id: str,
        kind: str,
        model: dict[str, Any],
        settings: dict[str, Any],
        seed: int | None,
        status: str = "running",
    ) -> None:
        """Record a run as it starts, so that a crashed run still shows with its settings (as ``running`` while its
        process lives, then as ``interrupted``: ``interrupt_runs``)."""
        with self.cursor() as cur:
            cur.execute(
                f"INSERT OR REPLACE INTO runs ({', '.join(RUN_COLUMNS)}, pid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL, ?)",
                [
                    run_id,
                    kind,
                    model.get("name"),
                    model.get("fingerprint"),
                    model.get("quantization"),
                    model.get("dtype"),
                    json.dumps(settings, default=str),
                    seed,
                    status,
                    time.time(),
                    os.getpid(),
                ],
            )

    def finish_run(self, run_id: str, status: str, summary: dict[str, Any], cost: dict[str, Any]) -> None:
        with self.cursor() as cur:
            cur.execute(
                "UPDATE runs SET status = ?, summary = ?, cost = ?, finished_at = ? WHERE run_id = ?",
                [status, json.dumps(summary, default=str), json.dumps(cost), time.time(), run_id],
            )

    def interrupt_runs(self) -> int:
        """Close the runs left ``running`` by a process that is gone (killed, crashed: it could not close them) as
        ``interrupted``; returns how many. A run of a live process (another command, the app) is left alone."""
        with self.writing() as cur:
            update = "status = 'interrupted', finished_at = coalesce(finished_at, ?)"
            return interrupt_dead(cur, "runs", "status = 'running'", update, [time.time()], os.getpid())

    def run(self, run_id: str) -> dict[str, Any] | None:
        """One run's row, its settings, summary and cost parsed (None where not written yet)."""
        self.interrupt_runs()
        with self.cursor() as cur:
            row = cur.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if row is None:
            return None
        return {
            name: (json.loads(value) if name in JSON_COLUMNS and value is not None else value)
            for name, value in zip(RUN_COLUMNS, row, strict=True)
        }

    def _run_results(self, run_id: str) -> list[tuple[str, dict[str, Any]]]:
        """(method, payload) of each result a run stored, in the order it stored them."""
        with self.cursor() as cur:
            rows = cur.execute(
                "SELECT method, payload FROM results WHERE starts_with(result_key, ?) ORDER BY created_at, rowid",
                [f"{run_id}:"],
            ).fetchall()
        return [(method, json.loads(payload)) for method, payload in rows]

    # ------------------------------------------------------------------ dataset runs (workflows.dataset)
    def dataset_runs(self) -> pd.DataFrame:
        """Dataset runs, newest first: id, label, model, segmenter, estimator, trace count, status."""
        self.interrupt_runs()
        return self._query(
            "SELECT run_id, json_extract_string(settings, '$.label') AS label, model_name, "
            "json_extract_string(settings, '$.segmenter') AS segmenter, json_extract_string(settings, '$.estimator') "
            "AS estimator, json_extract(summary, '$.traces') AS traces, status, created_at FROM runs "
            "WHERE kind = 'dataset' ORDER BY created_at DESC"
        )

    def dataset_coverage(self, trace_hashes: list[str]) -> pd.DataFrame:
        """Finished dataset runs that analysed any of ``trace_hashes`` without an error, newest first: id, label,
        segmenter, estimator, and how many of the traces each covers (a record holding an error covers none)."""
        return self._query(
            "SELECT r.run_id, json_extract_string(r.settings, '$.label') AS label, r.model_name, "
            "json_extract_string(r.settings, '$.segmenter') AS segmenter, "
            "json_extract_string(r.settings, '$.estimator') AS estimator, count(*) AS covered, r.created_at "
            "FROM results s JOIN runs r ON r.run_id = split_part(s.result_key, ':', 1) "
            "WHERE r.kind = 'dataset' AND r.status = 'done' AND s.kind = 'dataset' "
            "AND list_contains(?, split_part(s.result_key, ':', 2)) "
            "AND json_extract_string(s.payload, '$.error') IS NULL GROUP BY ALL ORDER BY r.created_at DESC",
            [list(trace_hashes)],
        )

    def dataset_records(self, run_id: str) -> list[dict[str, Any]]:
        """A dataset run's per-trace records (payloads of ``DatasetRecord``), in trace order."""
        return [payload for _, payload in self._run_results(run_id)]

    # ------------------------------------------------------------------ diagnosis evaluations (diagnosis.verdicts)
    def evaluation_runs(self) -> pd.DataFrame:
        """Finished diagnosis runs, newest first: id, split, model."""
        self.interrupt_runs()
        return self._query(
            "SELECT run_id, json_extract_string(settings, '$.split') AS split, model_name, created_at FROM runs "
            "WHERE kind = 'diagnosis' AND status = 'done' ORDER BY created_at DESC"
        )

    def evaluation(self, run_id: str) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]] | None:
        """A diagnosis run's summary table (a row per detector and baseline) and each detector's payload
        (predictions, labels) by name; None if there is no finished diagnosis run ``run_id``."""
        run = self.run(run_id)
        if run is None or run["kind"] != "diagnosis" or not run["summary"]:
            return None
        return run["summary"]["table"], dict(self._run_results(run_id))
