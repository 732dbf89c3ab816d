"""Persistent storage (DuckDB) for traces, model scores, rollouts, results, runs and jobs."""

from rredcot_viz.store.base import SCHEMA_VERSION, StoreLockedError, default_store_path
from rredcot_viz.store.export import EXPORT_FORMATS
from rredcot_viz.store.store import Store

__all__ = ["EXPORT_FORMATS", "SCHEMA_VERSION", "Store", "StoreLockedError", "default_store_path"]
