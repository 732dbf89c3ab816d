"""Runs and the named queries of dataset and diagnosis runs."""

from __future__ import annotations

import pytest

MODEL = {"name": "m", "fingerprint": "f", "quantization": "none", "dtype": "float32"}


def test_runs_are_recorded(store):
    store.put_run("run-1", "analysis", MODEL, {"k": 3}, seed=7)
    started = store.run("run-1")
    assert (started["status"], started["summary"], started["finished_at"]) == ("running", None, None)
    store.finish_run("run-1", "done", {"traces": 2}, {"seconds": 1.5})
    run = store.run("run-1")
    assert (run["kind"], run["status"], run["seed"], run["model_fingerprint"]) == ("analysis", "done", 7, "f")
    assert run["settings"] == {"k": 3} and run["summary"] == {"traces": 2} and run["cost"] == {"seconds": 1.5}
    assert run["finished_at"] >= run["created_at"]
    assert store.run("no-such-run") is None


def _dataset_run(store, run_id: str, label: str, payloads: list[dict]) -> None:
    settings = {"label": label, "segmenter": "hybrid", "estimator": "rredcot"}
    store.put_run(run_id, "dataset", MODEL, settings, None)
    for i, payload in enumerate(payloads):
        store.put_result(f"{run_id}:trace{i}", "", "dataset", "rredcot", settings, payload, {})
    store.finish_run(run_id, "done", {"traces": len(payloads), "errors": 0, "label": label}, {})


def test_dataset_runs_list_newest_first(store):
    _dataset_run(store, "ds-a", "first", [{"x": 1}])
    _dataset_run(store, "ds-b", "second", [{"x": 1}, {"x": 2}])
    store.put_run("other", "analysis", MODEL, {"label": "not a dataset"}, None)
    runs = store.dataset_runs()
    assert runs["run_id"].tolist() == ["ds-b", "ds-a"] and runs["label"].tolist() == ["second", "first"]
    assert runs["segmenter"][0] == "hybrid" and runs["estimator"][0] == "rredcot" and runs["status"][0] == "done"
    assert [int(n) for n in runs["traces"]] == [2, 1] and runs["model_name"][0] == "m"


def test_dataset_records_are_the_runs_own_in_stored_order(store):
    payloads = [{"trace_hash": f"h{i}", "sigma": [i, -i]} for i in range(5)]
    _dataset_run(store, "ds_1", "mine", payloads)
    _dataset_run(store, "dsx1", "a LIKE 'ds_1:%' would match this run too", [{"trace_hash": "other"}])
    assert store.dataset_records("ds_1") == payloads
    assert store.dataset_records("dsx1") == [{"trace_hash": "other"}]
    assert store.dataset_records("ds") == []  # a prefix of an id is not a run


def _diagnosis_run(store, run_id: str, split: str, finish: bool = True) -> None:
    store.put_run(run_id, "diagnosis", MODEL, {"split": split, "detectors": {"min_sigma": {}}}, None)
    store.put_result(f"{run_id}:0", "", "diagnosis", "min_sigma[uniform]", {}, {"predictions": [-1, 2]}, {})
    store.put_result(f"{run_id}:1", "", "diagnosis", "gap", {}, {"predictions": [0, 0]}, {})
    if finish:
        table = [{"detector": "min_sigma[uniform]", "f1": 0.5}, {"detector": "always_first", "f1": 0.25}]
        store.finish_run(run_id, "done", {"split": split, "table": table}, {"seconds": 2.0})


def test_evaluation_runs_list_finished_diagnosis_runs(store):
    _diagnosis_run(store, "diag-1", "gsm8k (random 4, seed 0)")
    _diagnosis_run(store, "diag-2", "math", finish=False)  # still running: not listed
    _dataset_run(store, "ds-a", "dataset", [{}])
    runs = store.evaluation_runs()
    assert runs["run_id"].tolist() == ["diag-1"] and runs["split"][0] == "gsm8k (random 4, seed 0)"
    assert runs["model_name"][0] == "m"


def test_an_evaluation_reads_back_its_table_and_payloads(store):
    _diagnosis_run(store, "diag-1", "gsm8k")
    table, payloads = store.evaluation("diag-1")
    assert [row["detector"] for row in table] == ["min_sigma[uniform]", "always_first"] and table[1]["f1"] == 0.25
    assert payloads == {"min_sigma[uniform]": {"predictions": [-1, 2]}, "gap": {"predictions": [0, 0]}}


@pytest.mark.parametrize("run_id", ["no-such-run", "unfinished", "ds-a"])
def test_only_a_finished_diagnosis_run_is_an_evaluation(store, run_id):
    _diagnosis_run(store, "unfinished", "math", finish=False)
    _dataset_run(store, "ds-a", "dataset", [{}])
    assert store.evaluation(run_id) is None


def test_a_run_whose_process_died_is_closed_as_interrupted(store):
    """After kill -9 an eval-diagnosis run stayed 'running' for ever; a live process's run stays running."""
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid names no process now
    for run_id in ("killed", "live", "mine"):
        store.put_run(run_id, "diagnosis", MODEL, {"split": "gsm8k"}, None)
    with store.cursor() as cur:
        cur.execute("UPDATE runs SET pid = ? WHERE run_id = 'killed'", [gone.pid])
        cur.execute("UPDATE runs SET pid = 1 WHERE run_id = 'live'")  # init: always alive
    assert store.interrupt_runs() == 1
    killed = store.run("killed")
    assert killed["status"] == "interrupted" and killed["finished_at"] >= killed["created_at"]
    assert store.run("live")["status"] == store.run("mine")["status"] == "running"
    assert store.interrupt_runs() == 0
