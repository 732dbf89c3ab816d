"""Persistent storage (DuckDB) for traces, model scores, rollouts, results and runs."""

from rredcot_viz.store.duckdb_store import EXPORT_FORMATS, SCHEMA_VERSION, Store, StoreLockedError, default_store_path

__all__ = ["EXPORT_FORMATS", "SCHEMA_VERSION", "Store", "StoreLockedError", "default_store_path"]
