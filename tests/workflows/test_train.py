"""Stored-run inspection: the run list, the trained policy of a checkpoint, held-out traces, value shifts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny import tiny_lm

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training import TrainConfig, builtin_split, config_for
from rredcot_viz.training.sampler import problem_prompt
from rredcot_viz.workflows.train import (
    checkpoint_root,
    held_out_traces,
    run_training,
    stored_run,
    trained_policy,
    training_runs,
    value_change,
    value_shift,
)


@pytest.fixture
def config() -> TrainConfig:
    return config_for(
        "grpo", steps=2, max_new_tokens=8, group_size=4, eval_problems=2, eval_samples=1, eval_every=1,
        lora_rank=4, learning_rate=1e-2,
    )  # fmt: skip


def test_a_stored_run_lists_and_reloads_as_its_trained_policy(tiny, config, tmp_path, monkeypatch):
    monkeypatch.setattr("rredcot_viz.training.sampler.reward", lambda text, answer: float(len(text) % 2))
    store = Store(tmp_path / "s.duckdb")
    run_id, history = run_training(tiny, config, store, problems=builtin_split(30, 2, seed=0))
    assert [m["step"] for m in history] == [0, 1, 2]
    runs = training_runs(store)
    assert runs["run_id"].tolist() == [run_id]
    assert (runs["method"][0], runs["status"][0], runs["steps_logged"][0], runs["steps_planned"][0]) == (
        "grpo", "done", 2, 2,
    )  # fmt: skip
    assert stored_run(store, run_id)[0] == config
    policy, step = trained_policy(tiny, store, run_id)
    assert step == 2 and policy.fingerprint == f"{tiny.fingerprint}:{run_id}:2"
    saved = torch.load(checkpoint_root(run_id) / "step_0002" / "state.pt", weights_only=True)["weights"]
    parameters = dict(policy.model.named_parameters())
    assert saved and all(torch.equal(parameters[name], value) for name, value in saved.items())
    ids = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        assert not torch.equal(policy.model(ids).logits, tiny.model(ids).logits)  # the adapter is live


def test_refusals_name_the_problem(tiny, config, tmp_path):
    store = Store(tmp_path / "s.duckdb")
    with pytest.raises(ConfigError, match="no training run 'nope'"):
        trained_policy(tiny, store, "nope")
    store.put_run("other-model", "train", {"name": "m", "fingerprint": "elsewhere"}, config.__dict__, 0)
    with pytest.raises(ConfigError, match="trained on another base model"):
        trained_policy(tiny, store, "other-model")
    store.put_run("no-checkpoint", "train", {"name": "m", "fingerprint": tiny.fingerprint}, config.__dict__, 0)
    with pytest.raises(ConfigError, match="has no checkpoint"):
        trained_policy(tiny, store, "no-checkpoint")


def test_held_out_traces_are_the_base_models_answers_under_the_trainers_prompt(tiny, config):
    traces = held_out_traces(tiny, config, limit=2)
    _, held_out = builtin_split(200, config.eval_problems, seed=0)
    assert [t.trace_id for t in traces] == ["held-out-0", "held-out-1"]
    for trace, problem in zip(traces, held_out, strict=True):
        assert trace.prompt == problem_prompt(tiny, problem) and trace.reference_solution == problem.solution
        assert trace.question == problem.question and trace.reference_answer == problem.answer
    assert [t.cot for t in held_out_traces(tiny, config, limit=2)] == [t.cot for t in traces]  # fixed seeds


def test_value_shift():
    shift = value_shift(np.array([0.1, 0.5, 1.0]), np.array([0.2, 0.2, 1.0]))
    assert shift["delta"] == pytest.approx([0.1, -0.3, 0.0])
    assert shift["largest_state"] == 2 and shift["mean_abs"] == pytest.approx(0.4 / 3)
    with pytest.raises(ConfigError, match="same segmentation"):
        value_shift(np.zeros(3), np.zeros(4))


def test_value_change_scores_one_segmentation_under_both_models(tiny):
    trace = Trace("What is 2 + 3?", "2 + 3 = 5.\nSo it is 5.\nThe answer is \\boxed{5}.", reference_answer="5",
                  reference_solution="2 + 3 = 5, \\boxed{5}", correct=True)  # fmt: skip
    other = tiny_lm(seed=1)
    change = value_change(Analyzer(tiny), Analyzer(other), trace)
    assert change.before.segmentation.cuts == change.after.segmentation.cuts  # the same tokenizer and text
    expected = Analyzer(other).analyze(trace, segmenters.get("hybrid")(), estimators.get("rredcot")()).values.values
    np.testing.assert_allclose(change.after.values.values, expected)
    np.testing.assert_allclose(change.shift["delta"], expected - change.before.values.values)
    assert not np.allclose(change.shift["delta"][:-1], 0.0)  # two random models value the prefixes differently


def test_a_stopped_run_keeps_its_state_and_resumes(tiny, config, tmp_path):
    from rredcot_viz.jobs import Cancelled

    store = Store(tmp_path / "s.duckdb")

    def stop_after_first(done: int, total: int) -> None:
        if done == 1:
            raise Cancelled("stopped by the user")

    with pytest.raises(Cancelled):
        run_training(tiny, config, store, problems=builtin_split(30, 2, seed=0), run_id="r", progress=stop_after_first)
    assert training_runs(store)["status"].tolist() == ["stopped"]
    assert [p.name for p in sorted(checkpoint_root("r").iterdir())] == ["step_0001"]
    run_training(tiny, config, store, problems=builtin_split(30, 2, seed=0), run_id="r", resume=True)
    assert training_runs(store)["status"].tolist() == ["done"]
    assert store.train_metrics(["r"])["step"].tolist() == [0, 1, 2]
