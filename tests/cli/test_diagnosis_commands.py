"""The diagnosis commands (cli/diagnosis_commands.py): ``eval-diagnosis`` on a sample, --strict, --calibrate-on."""

from __future__ import annotations

import json

import pytest
from planted import STEP_RECORDS

from rredcot_viz.cli import main
from rredcot_viz.store import Store


@pytest.mark.integration
def test_eval_diagnosis_on_a_seeded_sample(tmp_path, capsys):
    data = tmp_path / "tiny_split.json"
    data.write_text(json.dumps(STEP_RECORDS))
    argv = ["eval-diagnosis", "--data", str(data), "--detector", "min_sigma", "--references", "none"]
    argv += ["--min-sigma-estimator", "uniform", "--sample", "4", "--no-store"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "4 traces from" in out and "always_first" in out
    assert out.index("min_sigma[uniform]: runs on 4 of 4 records") < out.index("ProcessBench tiny_split")
    # uniform credit is never negative, so min_sigma says "no error" everywhere: F1 0, like always_no_error
    last = out.strip().splitlines()[-1]
    assert last.startswith(
        "split=tiny_split n=4 records_runnable_pct=100 best_detector=min_sigma[uniform] best_f1=0.0000 "
        "always_no_error_f1=0.0000 uniform_random_f1="
    )
    assert "seconds_per_record=" in last


def test_eval_diagnosis_strict_stops_before_the_model(tmp_path, capsys):
    records = [{"problem": "1+1?", "steps": ["1+1=2.", "So 2."], "final_answer_correct": True, "label": -1}]
    data = tmp_path / "one.json"
    data.write_text(json.dumps(records))
    argv = ["eval-diagnosis", "--data", str(data), "--detector", "min_sigma", "--references", "none"]
    argv += ["--min-sigma-estimator", "rredcot", "--strict", "--no-store", "--model", "no-such-model"]
    assert main(argv) == 2  # the unknown model is never reached: the check stops first
    err = capsys.readouterr().err
    assert "--strict" in err and "min_sigma[rredcot]: runs on 0 of 1 records; 1 lack a reference answer" in err


def test_eval_diagnosis_calibrates_only_the_verifier(tmp_path, capsys):
    data = tmp_path / "one.json"
    data.write_text(json.dumps([{"problem": "1+1?", "steps": ["So 2."], "final_answer_correct": True, "label": -1}]))
    argv = ["eval-diagnosis", "--data", str(data), "--detector", "min_sigma", "--calibrate-on", str(data)]
    assert main([*argv, "--references", "none", "--model", "no-such-model"]) == 2
    assert "--calibrate-on calibrates the step_verifier threshold" in capsys.readouterr().err


def test_eval_diagnosis_record_options_come_from_record_selection(tmp_path, capsys):
    """--sample/--balanced/--segmenter/--strict are RecordSelection's generated options: its range check answers."""
    data = tmp_path / "one.json"
    data.write_text(json.dumps([{"problem": "1+1?", "steps": ["So 2."], "final_answer_correct": True, "label": -1}]))
    argv = ["eval-diagnosis", "--data", str(data), "--detector", "min_sigma", "--references", "none"]
    assert main([*argv, "--sample", "0", "--model", "no-such-model"]) == 2
    assert "sample must be in [1, ...], got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a segmenter that is not registered is refused by the option's choices
        main([*argv, "--segmenter", "no-such-segmenter"])


def test_eval_diagnosis_prints_and_stores_each_detector_as_it_finishes(tmp_path, tiny_model_dir, capsys):
    """A timeout or a lock used to lose every finished detector: each is stored and printed when it ends; a sample
    the file cannot balance says so."""
    records = [
        {"id": f"e{i}", "problem": "1+1?", "steps": ["1+1=3.", "So 3."], "final_answer_correct": False, "label": 0}
        for i in range(4)
    ]
    data = tmp_path / "errors_only.json"
    data.write_text(json.dumps(records))
    store_path = tmp_path / "store.duckdb"
    argv = ["--store", str(store_path), "eval-diagnosis", "--data", str(data), "--references", "none"]
    argv += ["--detector", "min_sigma,value_drop", "--min-sigma-estimator", "uniform", "--value-drop-estimator"]
    argv += ["uniform", "--sample", "4", "--balanced", "--model", str(tiny_model_dir)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "the balanced sample of 4 holds 2 records: the file has only 0 correct (of 2 asked)" in out
    run_id = out.split("\nrun ", 1)[1].split(":", 1)[0]
    started = out.index(f"run {run_id}: each detector's result is stored in {store_path} as it finishes")
    first, second = out.index("min_sigma[uniform]: F1 n/a"), out.index("value_drop[uniform]: F1 n/a")
    assert started < first < second < out.index("ProcessBench errors_only")
    assert "(stored)" in out[first : out.index("\n", first)]
    store = Store(store_path)
    assert store.run(run_id)["status"] == "done"
    assert sorted(store.evaluation(run_id)[1]) == ["min_sigma[uniform]", "value_drop[uniform]"]
    store.close()
