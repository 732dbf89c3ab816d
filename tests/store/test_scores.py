"""The engine's persistent cache: stats, scores, rollouts, contexts and results survive a new process."""

from __future__ import annotations

import numpy as np

from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.scoring import BoundaryCache
from rredcot_viz.scoring.cache import CacheBackend
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.types import Rollout, TokenStats


def test_the_store_implements_the_cache_backend():
    protocol = {name for name in vars(CacheBackend) if not name.startswith("_")}
    assert protocol >= {"load_stats", "save_scores", "put_result", "result"}
    assert all(callable(getattr(Store, name, None)) for name in protocol)


def test_cache_backend_round_trips(store):
    stats = TokenStats(np.array([-1.5, -0.25]), np.array([2.0, 0.5]))
    store.save_stats("ctx", stats)
    loaded = store.load_stats("ctx")
    np.testing.assert_array_equal(loaded.logprobs, stats.logprobs)
    np.testing.assert_array_equal(loaded.entropies, stats.entropies)
    assert store.load_stats("other") is None
    store.save_scores("ctx", "series", {0: np.array([-0.1, -0.2]), 7: np.array([-3.0])})
    scores = store.load_scores("ctx", "series")
    assert sorted(scores) == [0, 7] and scores[7].tolist() == [-3.0]
    assert store.load_scores("ctx", "other series") == {}
    rollouts = [Rollout(4, i, 100 + i, f"text {i}", "8" if i else None, bool(i), "answer", 12) for i in range(3)]
    store.save_rollouts("ctx", "sampling", rollouts)
    assert store.load_rollouts("ctx", "sampling", 4) == rollouts and store.load_rollouts("ctx", "sampling", 5) == []


def test_results_round_trip_and_replace(store):
    assert store.result("r1") is None
    store.put_result("r1", "ctx", "attribution", "loo", {"k": 3}, {"scores": [0.5, -1.0]}, {"seconds": 0.1})
    assert store.result("r1") == {"scores": [0.5, -1.0]}
    store.put_result("r1", "ctx", "attribution", "loo", {"k": 3}, {"scores": [2.0]}, {})  # recomputed: replaced
    assert store.result("r1") == {"scores": [2.0]}


def test_contexts_name_the_trace_and_model(store):
    store.put_context("c1", "t1", "model-a", "fa", "prompt 1", "none")
    store.put_context("c2", "t2", "model-a", "fa", "prompt 2", "none")
    store.put_context("c3", "t1", "model-a", "fq", "prompt 1", "4bit-nf4")
    store.put_context("c1", "t9", "ignored", "x", "x", "8bit")  # a key is described once
    assert [c["context_key"] for c in store.contexts()] == ["c1", "c2", "c3"]
    assert store.contexts("t1") == [
        {
            "context_key": "c1",
            "trace_hash": "t1",
            "model_name": "model-a",
            "model_fingerprint": "fa",
            "quantization": "none",
        },
        {
            "context_key": "c3",
            "trace_hash": "t1",
            "model_name": "model-a",
            "model_fingerprint": "fq",
            "quantization": "4bit-nf4",
        },
    ]
    assert store.contexts("nothing") == []


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
    contexts = store.contexts()
    assert [c["trace_hash"] for c in contexts] == [trace.content_hash] and contexts[0]["model_name"] == tiny.name
    assert contexts[0]["model_fingerprint"] == tiny.fingerprint and contexts[0]["quantization"] == "none"


def test_two_threads_writing_one_key_at_once_both_succeed(store):
    """A job and the page watching it register the same context and save the same scores at the same moment;
    DuckDB fails the second of two concurrent inserts of one key (even OR IGNORE), so the store serialises them."""
    import threading

    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def write(worker: int) -> None:
        start.wait()
        try:
            for round_ in range(40):
                store.put_context(f"ctx{round_}", "hash", "model", "fp", "prompt", "none")
                store.save_scores(f"ctx{round_}", "series", {0: np.array([-0.5]), worker: np.array([-1.0])})
        except Exception as error:  # collected: an exception in a thread would not fail the test by itself
            errors.append(error)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.contexts()) == 40 and set(store.load_scores("ctx39", "series")) == {0, 1, 2, 3}
