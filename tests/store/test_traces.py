"""Traces by content hash, in collections."""

from __future__ import annotations

from rredcot_viz.traces.io import sample_traces


def test_trace_round_trip_and_collections(store):
    traces = sample_traces()[:3]
    assert store.put_traces(traces, "samples") == 3
    store.put_traces(traces, "samples")  # idempotent
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


def test_a_trace_is_stored_once_whatever_its_collection(store):
    trace = sample_traces()[0]
    store.put_traces([trace], "samples")
    store.put_traces([trace], "user")  # same content: the first collection keeps it
    assert store.collections() == {"samples": 1}
    assert store.trace("no-such-hash") is None
