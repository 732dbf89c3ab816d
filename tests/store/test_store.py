"""The DuckDB store: schema, round trips, the engine's persistent cache, lock errors and exports."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.scoring import BoundaryCache
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import SCHEMA_VERSION, Store, StoreLockedError
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.types import Rollout, TokenStats


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "store.duckdb")
    yield store
    store.close()


def test_schema_is_created_and_versioned(store, tmp_path):
    assert store.schema_version() == SCHEMA_VERSION
    assert {"traces", "token_stats", "scores", "rollouts", "results", "runs", "contexts"} <= set(store.tables())
    store.close()
    again = Store(tmp_path / "store.duckdb")  # reopening runs no migration twice
    assert again.schema_version() == SCHEMA_VERSION
    with again.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    again.close()


def test_trace_round_trip_and_collections(store):
    traces = sample_traces()[:3]
    assert store.put_traces(traces, "samples") == 3
    store.put_traces(traces, "samples")  # idempotent
    assert store.collections() == {"samples": 3}
    assert store.trace(traces[1].content_hash) == traces[1]
    assert [t.content_hash for t in store.traces("samples")] == [t.content_hash for t in traces]


def test_cache_backend_round_trips(store):
    stats = TokenStats(np.array([-1.5, -0.25]), np.array([2.0, 0.5]))
    store.save_stats("ctx", stats)
    loaded = store.load_stats("ctx")
    np.testing.assert_array_equal(loaded.logprobs, stats.logprobs)
    store.save_scores("ctx", "series", {0: np.array([-0.1, -0.2]), 7: np.array([-3.0])})
    scores = store.load_scores("ctx", "series")
    assert sorted(scores) == [0, 7] and scores[7].tolist() == [-3.0]
    rollouts = [Rollout(4, i, 100 + i, f"text {i}", "8" if i else None, bool(i), "answer", 12) for i in range(3)]
    store.save_rollouts("ctx", "sampling", rollouts)
    assert store.load_rollouts("ctx", "sampling", 4) == rollouts and store.load_rollouts("ctx", "sampling", 5) == []


def test_a_second_process_finds_results_in_the_store(tiny, store):
    """A new analyzer (empty memory) over the same store re-uses every score: zero model calls."""
    trace = sample_traces()[0]
    estimator = estimators.get("rredcot")()
    first = Analyzer(tiny, cache=BoundaryCache(backend=store)).analyze(trace, segmenters.get("hybrid")(k=3), estimator)
    assert first.model_calls == 1
    fresh = Analyzer(tiny, cache=BoundaryCache(backend=store))
    again = fresh.analyze(trace, segmenters.get("hybrid")(k=2), estimator)
    assert again.model_calls == 0
    np.testing.assert_allclose(again.values.values[0], first.values.values[0])
    contexts = store.query("SELECT trace_hash, model_name FROM contexts")
    assert contexts["trace_hash"].tolist() == [trace.content_hash] and contexts["model_name"][0] == tiny.name


def test_another_process_holding_the_file_is_named(tmp_path):
    path = tmp_path / "held.duckdb"
    holder = Store(path)
    code = f"from rredcot_viz.store import Store; Store({str(path)!r})"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    holder.close()
    assert result.returncode != 0
    assert "StoreLockedError" in result.stderr and "is open in process" in result.stderr
    assert "RREDCOT_STORE" in result.stderr


def test_lock_error_type_in_process(tmp_path, monkeypatch):
    import duckdb

    def refuse(path):
        raise duckdb.IOException(
            'IO Error: Could not set lock on file "x": Conflicting lock is held in /usr/bin/python3 (PID 4242).'
        )

    monkeypatch.setattr(duckdb, "connect", refuse)
    with pytest.raises(StoreLockedError, match=r"open in process 4242 \(/usr/bin/python3\)"):
        Store(tmp_path / "x.duckdb")


def test_exports(store, tmp_path):
    store.put_traces(sample_traces()[:2], "samples")
    for fmt in ("parquet", "csv", "jsonl"):
        out = store.export("traces", tmp_path / f"traces.{fmt}")
        assert out.stat().st_size > 0
    lines = (tmp_path / "traces.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["collection"] == "samples"
    selected = store.export("SELECT trace_id FROM traces WHERE outcome = 1", tmp_path / "ok.csv")
    assert selected.read_text().splitlines()[0] == "trace_id"
    with pytest.raises(RredcotError, match="neither a table"):
        store.export("nothing", tmp_path / "x.csv")
    with pytest.raises(RredcotError, match="export format must be one of"):
        store.export("traces", tmp_path / "x.xlsx")


def test_runs_are_recorded(store):
    store.put_run(
        "run-1",
        "analysis",
        {"name": "m", "fingerprint": "f", "quantization": "none", "dtype": "float32"},
        {"k": 3},
        seed=7,
    )
    store.finish_run("run-1", "done", {"traces": 2}, {"seconds": 1.5})
    row = store.query("SELECT status, seed, summary FROM runs").iloc[0]
    assert row["status"] == "done" and row["seed"] == 7 and json.loads(row["summary"]) == {"traces": 2}
