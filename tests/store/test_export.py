"""Exports of a table or a SELECT query, in every format: one read-only SELECT, CSV cells safe in a spreadsheet."""

from __future__ import annotations

import csv
import json
import re

import pytest

from rredcot_viz.errors import RredcotError
from rredcot_viz.files import PARTIAL_PREFIX, spreadsheet_cell
from rredcot_viz.store import EXPORT_FORMATS
from rredcot_viz.traces.io import sample_traces


def test_exports(store, tmp_path):
    store.put_traces(sample_traces()[:2], "samples")
    for fmt in EXPORT_FORMATS:
        out = store.export("traces", tmp_path / f"traces.{fmt}")
        assert out.stat().st_size > 0
    lines = (tmp_path / "traces.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["collection"] == "samples"
    with store.cursor() as cur:  # read back by DuckDB: the file is a real parquet file
        parquet = cur.execute(f"SELECT count(*), min(collection) FROM '{tmp_path / 'traces.parquet'}'").fetchone()
    assert parquet == (2, "samples")
    selected = store.export("SELECT trace_id FROM traces WHERE outcome = 1", tmp_path / "ok.csv")
    assert selected.read_text().splitlines()[0] == "trace_id"
    with pytest.raises(RredcotError, match="neither a table"):
        store.export("nothing", tmp_path / "x.csv")
    with pytest.raises(RredcotError, match="export format must be one of"):
        store.export("traces", tmp_path / "x.xlsx")


def test_the_format_can_be_named_and_the_path_quoted(store, tmp_path):
    store.put_traces(sample_traces()[:3], "samples")
    out = store.export("  select trace_id from traces", tmp_path / "it's here.out", fmt="csv")
    assert out.read_text().splitlines()[0] == "trace_id" and len(out.read_text().splitlines()) == 4


def trace_count(store) -> int:
    with store.cursor() as cur:
        return cur.execute("SELECT count(*) FROM traces").fetchone()[0]


def test_only_one_select_runs_and_it_changes_nothing(store, tmp_path):
    """The query was pasted into COPY (...): this one exported "1" and then deleted every trace."""
    store.put_traces(sample_traces()[:3], "samples")
    out = tmp_path / "out.csv"
    planted = "SELECT 1) TO 'x.csv' (FORMAT csv); DELETE FROM traces; COPY (SELECT 1"
    with pytest.raises(RredcotError, match=r"neither a table .* nor a SELECT query: Parser Error: syntax error"):
        store.export(planted, out)
    refused = {
        "DELETE FROM traces": "holds 1 statement\\(s\\): DELETE",
        "SELECT 1; DELETE FROM traces": "holds 2 statement\\(s\\): SELECT, DELETE",
        "COPY traces TO 'elsewhere.csv'": "holds 1 statement\\(s\\): COPY",
    }
    for query, holds in refused.items():
        with pytest.raises(RredcotError, match=f"exactly one SELECT query, which it only reads; .* {holds}"):
            store.export(query, out)
    assert trace_count(store) == 3 and not out.exists() and not (tmp_path / "elsewhere.csv").exists()
    store.export("WITH n AS (SELECT count(*) AS n FROM traces) SELECT * FROM n", out)  # WITH ... SELECT is one
    assert out.read_text().splitlines() == ["n", "3"]


def test_a_query_duckdb_rejects_is_a_message(store, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    rejected = {
        "SELECT nope FROM traces": 'Binder Error: Referenced column "nope" not found',
        "SELECT * FROM nowhere": "Catalog Error: Table with name nowhere does not exist",
        "SELECT * FROM read_csv('missing.csv')": "IO Error: No files found",
    }
    for query, reason in rejected.items():
        with pytest.raises(RredcotError, match=f"export of {re.escape(repr(query))} failed: {reason}"):
            store.export(query, out)
    assert out.read_text() == "old\n" and not [p for p in tmp_path.iterdir() if p.name.startswith(PARTIAL_PREFIX)]


def test_csv_text_cells_cannot_run_in_a_spreadsheet(store, tmp_path):
    """Cells starting with = + - @ were written as they are; text gets a quote, numbers and lists do not."""
    cells = ["=HYPERLINK('http://x', 'y')", "+1+1", "-2+3", "@SUM(A1)", "\tx", "-3", "- item", "fine", "a=b"]
    with store.cursor() as cur:
        cur.execute('CREATE TABLE hostile (text VARCHAR, number DOUBLE, "odd ""name""" VARCHAR[], payload JSON)')
        for index, cell in enumerate(cells):
            cur.execute("INSERT INTO hostile VALUES (?, ?, ?, ?)", [cell, -index - 0.5, [cell], json.dumps(cell)])
    rows = list(csv.reader(store.export("hostile", tmp_path / "hostile.csv").open(newline="")))
    assert rows[0] == ["text", "number", 'odd "name"', "payload"]
    assert [row[0] for row in rows[1:]] == [spreadsheet_cell(cell) for cell in cells]
    assert [row[0] for row in rows[1:5]] == ["'=HYPERLINK('http://x', 'y')", "'+1+1", "'-2+3", "'@SUM(A1)"]
    assert [row[1] for row in rows[1:3]] == ["-0.5", "-1.5"]  # numbers stay numbers
    assert rows[1][2].startswith("['=HYPERLINK(") and rows[1][3] == json.dumps(cells[0])  # a list, a JSON string
    lines = store.export("hostile", tmp_path / "hostile.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["text"] == cells[0]  # only CSV, the format spreadsheets open, is changed
