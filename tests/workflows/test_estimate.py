"""Time estimates before sampling work starts (workflows/estimate.py): the rate this machine showed recently."""

from __future__ import annotations

import pytest

from rredcot_viz.model.meter import CostMeter
from rredcot_viz.store import Store
from rredcot_viz.training import quick
from rredcot_viz.types import CallCost
from rredcot_viz.workflows.estimate import (
    duration,
    estimate_sampling,
    estimate_training,
    estimate_units,
    held_out_evaluations,
    sampling_rate,
    time_line,
)


class Meterd:  # what an estimate reads of a model: its meter
    def __init__(self):
        self.meter = CostMeter()


def test_rate_from_this_process_then_from_the_stored_jobs(tmp_path):
    lm, store = Meterd(), Store(tmp_path / "store.duckdb")
    assert sampling_rate(lm, store) is None and estimate_sampling(lm, 1000, store) is None
    store.put_job(_job("old", {"tokens_generated": 600, "seconds": 20.0}))
    store.put_job(_job("failed", {"tokens_generated": 10_000, "seconds": 1.0}, status="failed"))
    rate, source = sampling_rate(lm, store)
    assert rate == pytest.approx(30.0) and source == "measured over 1 earlier sampling jobs on this machine"
    lm.meter.record("score", CallCost(tokens_processed=10_000, seconds=5.0))  # not sampling: not a rate
    lm.meter.record("sample_after_prefixes", CallCost(tokens_generated=400, seconds=4.0))
    estimate = estimate_sampling(lm, 5000, store)
    assert estimate.rate == pytest.approx(100.0) and estimate.seconds == pytest.approx(50.0)
    assert estimate.line() == (
        "at most about 50 s: up to 5,000 generated tokens at 100 tokens/s (measured on this machine over its "
        "last 1 sampling calls)"
    )
    store.close()


def test_duration_and_evaluation_count():
    assert [duration(s) for s in (40, 210, 7200)] == ["40 s", "3.5 min", "2.0 h"]
    config = quick("grpo")  # 8 steps, evaluated at 0, 4 and 8
    assert held_out_evaluations(config) == 3 and held_out_evaluations(config, start=4) == 1
    assert held_out_evaluations(quick("grpo", eval_every=0)) == 0


def test_training_estimate_from_earlier_steps_and_the_sampling_rate(tmp_path):
    lm, store = Meterd(), Store(tmp_path / "store.duckdb")
    config = quick("grpo", eval_problems=4, eval_samples=1, max_new_tokens=10)  # 3 evaluations of 40 tokens
    seconds, how = estimate_training(lm, config, store)
    assert seconds is None and "no training step measured on this machine yet" in how
    store.put_run("r1", "train", {"name": "m", "fingerprint": "f"}, {"method": "grpo", "steps": 2}, 0)
    store.put_train_metrics("r1", 1, {"step": 1, "seconds": 64.0, "rollouts": 32})
    lm.meter.record("sample", CallCost(tokens_generated=60, seconds=3.0))  # 20 tokens/s
    seconds, how = estimate_training(lm, config, store)
    assert seconds == pytest.approx(8 * 32 * 2.0 + 120 / 20)
    assert how == (
        "8 steps × 32 rollouts at 2.00 s per rollout (earlier runs here) + 3 held-out evaluations of 4 answers "
        "(at most 6 s at 20 tokens/s)"
    )
    store.close()


def test_units_of_a_job_kind_at_the_seconds_earlier_jobs_took(tmp_path):
    store = Store(tmp_path / "store.duckdb")
    assert estimate_units(store, "dataset", 12, "traces") == (None, "12 traces; no such job has finished on this "
                                                                    "machine yet")  # fmt: skip
    store.put_job({**_job("d1", {"seconds": 30.0}), "kind": "dataset", "total": 10})
    store.put_job({**_job("d2", {"seconds": 90.0}), "kind": "dataset", "total": 20})
    seconds, how = estimate_units(store, "dataset", 12, "traces")
    assert seconds == pytest.approx(48.0) and how == "12 traces at 4.0 s each (earlier jobs here)"
    assert time_line(seconds, how) == "Time here: about 48 s; 12 traces at 4.0 s each (earlier jobs here)."
    assert time_line(None, "why") == "Time here: not known yet; why."
    store.close()


def _job(job_id: str, cost: dict, status: str = "done") -> dict:
    return {"job_id": job_id, "kind": "mc", "job_key": None, "label": job_id, "status": status, "done": 1,
            "total": 1, "unit": "states", "message": "", "error": None, "result": None, "cost": cost, "pid": 1,
            "created_at": 1.0, "started_at": 1.0, "finished_at": 2.0}  # fmt: skip


def test_counts_and_rates_read_as_words():
    """ "1 tokens/s", "1 answers"."""
    from rredcot_viz.workflows.estimate import plural, rate_text

    assert (plural(1, "answer"), plural(3, "answer")) == ("1 answer", "3 answers")
    assert (rate_text(1.24), rate_text(20.4)) == ("1.2 tokens/s", "20 tokens/s")
