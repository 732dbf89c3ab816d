"""Storing what an import read: its traces in a collection of the store. Kept apart from the run views
(``workflows.runs``), which need the estimators and so torch: storing a dataset's traces should not load the
ML stack (256 MB and seconds of start-up beside a 200k-row import)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rredcot_viz.store.traces import StoredTraces
from rredcot_viz.traces.importers import ImportReport
from rredcot_viz.traces.importers.rollouts import ROLLOUT_KEY
from rredcot_viz.traces.trace import Trace

if TYPE_CHECKING:
    from rredcot_viz.store import Store


def run_label(path: str) -> str:
    """A run's name from its path: the trainer's output folder rather than its ``completions`` subfolder."""
    location = Path(path)
    if location.name == "completions" and location.parent.name:
        location = location.parent
    return location.name or str(path)


def is_run(traces: list[Trace]) -> bool:
    """Whether the traces are an RL run's completions (an importer marked their step and prompt)."""
    return any(ROLLOUT_KEY in t.metadata for t in traces)


def store_traces(
    store: Store,
    report: ImportReport,
    collection: str | None = None,
    label: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> StoredTraces:
    """Store an import's traces in ``collection`` (default ``run:NAME`` for a run, ``dataset:NAME`` otherwise;
    traces the store already holds join it); says what was new and what was stored already."""
    label = label or run_label(report.path)
    collection = collection or (f"run:{label}" if is_run(report.traces) else f"dataset:{label}")
    return store.put_traces(report.traces, collection, progress)
