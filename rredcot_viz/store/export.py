"""Exports of a table, or of a user's own SELECT query, to files other tools read."""

from __future__ import annotations

from pathlib import Path

from rredcot_viz.errors import RredcotError
from rredcot_viz.files import atomic_path, check_output_path
from rredcot_viz.store.base import StoreBase

EXPORT_FORMATS = ("parquet", "csv", "jsonl")


class ExportStore(StoreBase):
    """DuckDB's COPY, so that an export never passes through pandas (memory) or row-by-row Python; it writes
    beside the target and renames, so a failed export leaves an existing file as it was."""

    def export(self, source: str, path: str | Path, fmt: str | None = None) -> Path:
        """Write a table name or a SELECT query to parquet, CSV or JSONL (format from the suffix)."""
        path = Path(path)
        fmt = fmt or path.suffix.lstrip(".")
        if fmt not in EXPORT_FORMATS:
            raise RredcotError(f"export format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
        if source in self.tables():
            relation = f"SELECT * FROM {source}"
        elif source.lstrip().lower().startswith("select"):
            relation = source
        else:
            raise RredcotError(f"{source!r} is neither a table ({', '.join(self.tables())}) nor a SELECT query")
        options = {"parquet": "FORMAT parquet", "csv": "FORMAT csv, HEADER", "jsonl": "FORMAT json"}[fmt]
        check_output_path(path, "export file")
        with atomic_path(path) as partial, self.cursor() as cur:
            cur.execute(f"COPY ({relation}) TO '{str(partial).replace(chr(39), chr(39) * 2)}' ({options})")
        return path
