"""The DuckDB store: traces, token stats, scores, rollouts, attribution results, runs, jobs and exports.

Everything expensive is looked up by content key before it is computed (the store is the persistent backend
of the engine's cache), so revisiting a trace or a setting is instant, across restarts. Each concern is a
mixin over one connection (``StoreBase``); all SQL of the project lives in this package, behind named queries.
"""

from __future__ import annotations

from rredcot_viz.store.export import ExportStore
from rredcot_viz.store.jobs import JobStore
from rredcot_viz.store.scores import ScoreStore
from rredcot_viz.store.traces import TraceStore
from rredcot_viz.store.training import TrainingStore


class Store(TraceStore, ScoreStore, TrainingStore, JobStore, ExportStore):
    """One DuckDB connection for the process; every call uses a cursor of its own (thread-safe)."""
