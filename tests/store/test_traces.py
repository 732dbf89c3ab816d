"""Traces by content hash, each in every collection it was put in, under the id it had there."""

from __future__ import annotations

import dataclasses
import json

from rredcot_viz.store import Store
from rredcot_viz.store import traces as trace_store
from rredcot_viz.store.base import MIGRATIONS
from rredcot_viz.traces.io import sample_traces


def test_trace_round_trip_and_collections(store):
    traces = sample_traces()[:3]
    stored = store.put_traces(traces, "samples")
    assert (stored.distinct, stored.new, stored.already_in) == (3, 3, 0)
    again = store.put_traces(traces, "samples")  # idempotent
    assert (again.distinct, again.new, again.already_in) == (3, 0, 3)
    assert store.collections() == {"samples": 3}
    assert store.trace(traces[1].content_hash) == traces[1]
    assert [t.content_hash for t in store.traces("samples")] == [t.content_hash for t in traces]


def test_collections_filter_and_limit(store):
    traces = sample_traces()[:4]
    store.put_traces(traces[:3], "samples")
    store.put_traces(traces[3:], "user")
    assert store.collections() == {"samples": 3, "user": 1}
    assert [t.content_hash for t in store.traces("user")] == [traces[3].content_hash]
    assert [t.content_hash for t in store.traces(limit=2)] == [t.content_hash for t in traces[:2]]
    assert len(store.traces()) == 4 and store.traces("nothing") == []


def test_a_trace_stored_once_is_in_every_collection_it_was_put_in(store):
    """The same traces put in a second collection were left in the first alone ("stored 2 traces in B", B empty)."""
    traces = sample_traces()[:2]
    store.put_traces(traces, "A")
    stored = store.put_traces([*traces, traces[0]], "B")
    assert store.collections() == {"A": 2, "B": 2}
    assert [t.content_hash for t in store.traces("B")] == [t.content_hash for t in traces]
    assert len(store.traces()) == 2 and store.trace("no-such-hash") is None  # each content is stored once
    assert (stored.given, stored.distinct, stored.new, stored.already_in) == (3, 2, 0, 0)
    assert str(stored) == (
        "2 traces in collection B: 0 new, 2 already stored (2 added to this collection, 0 already in it); "
        "1 repeated a trace above"
    )
    assert str(store.put_traces(traces[:1], "B")) == (
        "1 traces in collection B: 0 new, 1 already stored (0 added to this collection, 1 already in it)"
    )


def test_a_trace_keeps_the_id_it_had_in_each_collection(store):
    """A re-imported trace's id was dropped, so a report by that id said it was not in the store."""
    trace = sample_traces()[0]
    store.put_traces([dataclasses.replace(trace, trace_id=None)], "A")
    store.put_traces([dataclasses.replace(trace, trace_id="gsm8k-17")], "B")
    store.put_traces([dataclasses.replace(trace, trace_id="late-id")], "A")  # A had none: it takes this one
    assert store.traces("B")[0].trace_id == "gsm8k-17" and store.traces("A")[0].trace_id == "late-id"
    assert [t.content_hash for t in store.traces_named("gsm8k-17")] == [trace.content_hash]
    assert store.traces_named("gsm8k-17")[0].trace_id == "gsm8k-17" and store.traces_named("other") == []


def test_traces_are_written_a_chunk_per_transaction_with_progress(store, monkeypatch):
    monkeypatch.setattr(trace_store, "CHUNK_ROWS", 2)
    traces = sample_traces()[:5]
    seen: list[tuple[int, int]] = []
    stored = store.put_traces([*traces[:3], traces[0], *traces[3:]], "chunked", lambda d, t: seen.append((d, t)))
    assert seen == [(2, 6), (4, 6), (6, 6)] and (stored.distinct, stored.new) == (5, 5)
    assert [t.content_hash for t in store.traces("chunked")] == [t.content_hash for t in traces]  # in order


def test_a_store_before_memberships_keeps_every_trace_in_its_collection(tmp_path):
    """Migration 5: each trace's collection and id in the old ``traces`` rows become its membership."""
    import duckdb

    path = tmp_path / "v4.duckdb"
    old = duckdb.connect(str(path))
    old.execute("CREATE TABLE schema_version (version INTEGER)")
    for version in range(4):
        for statement in MIGRATIONS[version]:
            old.execute(statement)
        old.execute("INSERT INTO schema_version VALUES (?)", [version + 1])
    traces = sample_traces()[:3]
    for i, (trace, collection) in enumerate(zip(traces, ["samples", "samples", "dataset:gsm8k"], strict=True)):
        old.execute(
            "INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [trace.content_hash, trace.trace_id, trace.source, trace.question, trace.outcome, len(trace.cot),
             json.dumps(trace.to_dict()), collection, float(i)],
        )  # fmt: skip
    old.close()
    store = Store(path)
    assert store.collections() == {"dataset:gsm8k": 1, "samples": 2}
    assert store.traces("dataset:gsm8k") == [traces[2]] and store.traces_named(traces[0].trace_id) == [traces[0]]
    store.put_traces(traces[:1], "dataset:gsm8k")  # and the migrated store takes new memberships
    assert store.collections()["dataset:gsm8k"] == 2
    store.close()
