"""Training runs: metrics by step, sampled rollouts and the named queries of training runs."""

from __future__ import annotations

import pandas as pd

MODEL = {"name": "m", "fingerprint": "base-fp", "quantization": "none", "dtype": "float32"}


def test_metrics_are_one_row_per_run_and_step(store):
    for step in range(3):
        store.put_train_metrics("t1", step, {"loss": 1.0 / (step + 1), "reward": step})
    store.put_train_metrics("t2", 0, {"loss": 9.0})
    store.put_train_metrics("t1", 2, {"loss": 0.125, "reward": 5})  # a resumed step replaces its row
    frame = store.train_metrics(["t1", "t2"])
    assert list(zip(frame["run_id"], frame["step"], strict=True)) == [("t1", 0), ("t1", 1), ("t1", 2), ("t2", 0)]
    assert frame["loss"].tolist() == [1.0, 0.5, 0.125, 9.0] and frame["reward"].tolist()[:3] == [0, 1, 5]
    assert store.train_metrics([]).empty and store.train_metrics(["nothing"]).empty


def test_rollouts_by_step(store):
    store.put_train_rollouts("t1", 4, [{"text": "a", "reward": 1.0}, {"text": "b", "reward": 0.0}])
    store.put_train_rollouts("t1", 0, [{"text": "c"}])
    store.put_train_rollouts("t2", 8, [{"text": "d"}])
    assert store.train_rollouts("t1", 4) == [{"text": "a", "reward": 1.0}, {"text": "b", "reward": 0.0}]
    assert store.train_rollout_steps("t1") == [0, 4] and store.train_rollouts("t1", 1) == []


def test_training_runs_list_steps_logged_and_planned(store):
    store.put_run("t1", "train", MODEL, {"method": "grpo", "steps": 10}, seed=0)
    for step in range(4):
        store.put_train_metrics("t1", step, {"loss": 0.0})
    store.finish_run("t1", "stopped", {"steps": 3}, {})
    store.put_run("t2", "train", MODEL, {"method": "rrpo", "steps": 5}, seed=0)  # nothing logged yet
    store.put_run("d1", "dataset", MODEL, {"method": "not training"}, None)
    runs = store.training_runs()
    assert runs["run_id"].tolist() == ["t2", "t1"] and runs["method"].tolist() == ["rrpo", "grpo"]
    assert runs["status"].tolist() == ["running", "stopped"] and runs["steps_planned"].tolist() == [5, 10]
    assert pd.isna(runs["steps_logged"][0]) and runs["steps_logged"][1] == 3
    assert runs["model_fingerprint"].tolist() == ["base-fp", "base-fp"] and "settings" not in runs


def test_a_training_run_reads_back_its_settings_and_base_model(store):
    settings = {"method": "grpo", "steps": 2, "lora_rank": 4}
    store.put_run("t1", "train", MODEL, settings, seed=0)
    store.put_run("d1", "dataset", MODEL, {}, None)
    assert store.train_run("t1") == (settings, "base-fp")
    assert store.train_run("d1") is None and store.train_run("nothing") is None
