"""Exports of a table or a SELECT query, in every format."""

from __future__ import annotations

import json

import pytest

from rredcot_viz.errors import RredcotError
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
