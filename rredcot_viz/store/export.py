"""Exports of a table, or of a user's own SELECT query, to files other tools read.

A query is parsed, never pasted into other SQL: DuckDB's parser must find exactly one SELECT statement in it,
which runs as a relation inside a transaction that is always rolled back, and a fixed COPY writes that relation
to the file. ``SELECT 1) TO 'x.csv'; DELETE FROM traces; --`` is thus a syntax error, not a deletion.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rredcot_viz.errors import RredcotError
from rredcot_viz.files import FORMULA_FIRST, PLAIN_NUMBER, atomic_path, check_output_path
from rredcot_viz.store.base import StoreBase

EXPORT_FORMATS = ("parquet", "csv", "jsonl")
COPY_OPTIONS = {"parquet": "FORMAT parquet", "csv": "FORMAT csv, HEADER", "jsonl": "FORMAT json"}
TEXT_TYPES = ("varchar", "enum")
"""DuckDB type ids of columns whose CSV cells are text (JSON is a varchar); a list or struct starts with [ or {."""
EXPORTED = "rredcot_export"
"""The name the relation being exported is registered under, on the export's own cursor (gone with it)."""


class ExportStore(StoreBase):
    """DuckDB's COPY, so that an export never passes through pandas (memory) or row-by-row Python; it writes
    beside the target and renames, so a failed export leaves an existing file as it was."""

    def export(self, source: str, path: str | Path, fmt: str | None = None) -> Path:
        """Write a table name or one SELECT query to parquet, CSV or JSONL (format from the suffix); CSV text
        cells that a spreadsheet would run as a formula start with ``'`` (``files.spreadsheet_cell``)."""
        import duckdb

        path = Path(path)
        fmt = fmt or path.suffix.lstrip(".")
        if fmt not in EXPORT_FORMATS:
            raise RredcotError(f"export format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
        tables = self.tables()
        query = f"SELECT * FROM {quoted(source)}" if source in tables else select_statement(source, tables)
        check_output_path(path, "export file")
        with atomic_path(path) as partial, self.cursor() as cur:
            cur.execute("BEGIN")
            try:
                relation = cur.sql(query)
                cur.register(EXPORTED, relation)
                columns = [
                    spreadsheet_column(name) if fmt == "csv" and kind.id in TEXT_TYPES else quoted(name)
                    for name, kind in zip(relation.columns, relation.types, strict=True)
                ]
                selected = f"SELECT {', '.join(columns)} FROM {EXPORTED}"
                cur.execute(f"COPY ({selected}) TO {literal(str(partial))} ({COPY_OPTIONS[fmt]})")
            except duckdb.Error as error:
                if self.damage(error) is not None:
                    raise
                raise RredcotError(f"export of {source!r} failed: {str(error).splitlines()[0]}") from None
            finally:
                cur.execute("ROLLBACK")
        return path


def select_statement(source: str, tables: list[str]) -> Any:
    """The one SELECT statement ``source`` holds, parsed (a ``duckdb.Statement``), else ``RredcotError``."""
    import duckdb

    try:
        statements = duckdb.extract_statements(source)
    except duckdb.Error as error:
        raise RredcotError(
            f"{source!r} is neither a table ({', '.join(tables)}) nor a SELECT query: {str(error).splitlines()[0]}"
        ) from None
    kinds = [statement.type.name for statement in statements]
    if kinds != ["SELECT"]:
        raise RredcotError(
            f"export takes a table or exactly one SELECT query, which it only reads; {source!r} holds "
            f"{len(kinds)} statement(s): {', '.join(kinds) or 'none'}"
        )
    return statements[0]


def quoted(name: str) -> str:
    """``name`` as a SQL identifier, whatever characters it has."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def spreadsheet_column(name: str) -> str:
    """The SQL of ``files.spreadsheet_cell`` on a text column: a ``'`` before text a spreadsheet would run."""
    text = f"{quoted(name)}::VARCHAR"
    first = ", ".join(f"'{character}'" for character in FORMULA_FIRST)
    return (
        f"CASE WHEN left({text}, 1) IN ({first}) AND NOT regexp_full_match({text}, '{PLAIN_NUMBER}') "
        f"THEN '''' || {text} ELSE {text} END AS {quoted(name)}"
    )
