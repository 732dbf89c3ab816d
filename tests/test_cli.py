"""The command line: info, import, and error handling without tracebacks."""

from __future__ import annotations

import json

import pytest

from rredcot_viz.cli import main
from rredcot_viz.paths import SAMPLE_TRACES_DIR


@pytest.mark.integration
def test_info_prints_the_embedded_model(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "SmolLM2-135M-Instruct" in out
    assert "device          cpu" in out and "context length  8192 tokens" in out
    assert "quantization    none" in out


def test_info_list_shows_the_catalogue(capsys):
    assert main(["info", "--list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m" in out and "[embedded]" in out and "qwen2.5-coder-1.5b" in out


def test_quantization_on_cpu_is_a_clear_error(capsys):
    assert main(["info", "--quantization", "4bit"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 4bit quantization needs bitsandbytes on a CUDA GPU") and "Traceback" not in err


def test_import_summarises_and_writes_our_jsonl(tmp_path, capsys):
    out = tmp_path / "traces.jsonl"
    assert main(["import", str(SAMPLE_TRACES_DIR / "arithmetic.jsonl"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "format                   native" in text and "records_failed           0" in text
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == 7 and all(record["schema"] == "rredcot.trace/1" for record in written)


def test_import_reports_bad_lines_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    good = {"question": "What is 1 + 1?", "cot": "1 + 1 = 2. The answer is \\boxed{2}.", "reference_answer": "2"}
    bad.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({"question": "q"}) + "\n")
    assert main(["import", str(bad)]) == 0
    text = capsys.readouterr().out
    assert "records_read             3" in text and "records_failed           2" in text
    assert "bad.jsonl:line 2: invalid JSON" in text
    assert "bad.jsonl:line 3: native: missing required trace fields ['cot']" in text


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    assert main(["import", str(tmp_path / "nope.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_export_from_the_store(tmp_path, capsys, monkeypatch):
    from rredcot_viz.store import Store
    from rredcot_viz.traces.io import sample_traces

    path = tmp_path / "s.duckdb"
    monkeypatch.setenv("RREDCOT_STORE", str(path))  # restored afterwards; --store sets it for the run
    store = Store(path)
    store.put_traces(sample_traces()[:2], "samples")
    store.close()
    out = tmp_path / "traces.csv"
    assert main(["--store", str(path), "export", "SELECT trace_id FROM traces ORDER BY trace_id", str(out)]) == 0
    assert out.read_text().splitlines() == ["trace_id", "sample-bakery-correct", "sample-bakery-failed"]
    assert main(["--store", str(path), "export", "nope", str(out)]) == 2
    assert "neither a table" in capsys.readouterr().err


@pytest.mark.integration
def test_eval_diagnosis_on_a_seeded_sample(tmp_path, capsys):
    records = [
        {
            "id": f"r{i}",
            "problem": f"What is {i} + {i}?",
            "steps": [f"{i} + {i} = {2 * i + e}.", f"So {2 * i + e}."],
            "final_answer_correct": e == 0,
            "label": -1 if e == 0 else 0,
        }
        for i, e in zip(range(1, 7), [1, 1, 1, 0, 0, 0], strict=True)
    ]
    data = tmp_path / "tiny_split.json"
    data.write_text(json.dumps(records))
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


def test_analyze_checks_what_the_estimator_needs_before_the_model(tmp_path, capsys):
    records = [
        {
            "id": "a",
            "problem": "1+1?",
            "steps": ["1+1=2.", "So \\boxed{2}."],
            "final_answer_correct": True,
            "label": -1,
        },
        {
            "id": "b",
            "problem": "2+2?",
            "steps": ["2+2=5.", "So \\boxed{5}."],
            "final_answer_correct": False,
            "label": 0,
        },
    ]
    data = tmp_path / "no_references.json"
    data.write_text(json.dumps(records))
    argv = ["analyze", str(data), "--estimator", "rredcot", "--model", "no-such-model"]
    assert main(argv) == 2  # nothing can run: it says so without loading the (unknown) model
    captured = capsys.readouterr()
    assert "capability check: rredcot: runs on 0 of 2 records; 2 lack a reference answer" in captured.out
    assert "--estimator own_answer or uniform can run on them" in captured.out
    assert "cannot run on any of the 2 traces" in captured.err
    assert main([*argv, "--strict"]) == 2
    assert "--strict: not every method can run on every record" in capsys.readouterr().err


def test_eval_diagnosis_calibrates_only_the_verifier(tmp_path, capsys):
    data = tmp_path / "one.json"
    data.write_text(json.dumps([{"problem": "1+1?", "steps": ["So 2."], "final_answer_correct": True, "label": -1}]))
    argv = ["eval-diagnosis", "--data", str(data), "--detector", "min_sigma", "--calibrate-on", str(data)]
    assert main([*argv, "--references", "none", "--model", "no-such-model"]) == 2
    assert "--calibrate-on calibrates the step_verifier threshold" in capsys.readouterr().err


def test_generated_options_reach_only_the_chosen_method(tmp_path, capsys):
    """Segmenter, estimator, attribution and detector settings are generated options; one the chosen method does
    not have is a clear error before the model loads (the unknown model is never reached)."""
    sample = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    no_model = ["--limit", "1", "--model", "no-such-model"]
    assert main(["analyze", sample, "--segmenter", "line", "--k", "3", *no_model]) == 2
    assert "error: --seg-k is not a setting of segmenter 'line'; its settings: none" in capsys.readouterr().err
    assert main(["analyze", sample, "--estimator", "uniform", "--trigger", "x", *no_model]) == 2
    assert "--est-trigger is not a setting of estimator 'uniform'; its settings: none" in capsys.readouterr().err
    assert main(["analyze", sample, "--estimator", "mc", "--est-aggregation", "geo_mean", *no_model]) == 2
    err = capsys.readouterr().err
    assert "--est-aggregation is not a setting of estimator 'mc'; its settings: --est-rollouts," in err
    assert main(["analyze", sample, "--seg-k", "0", *no_model]) == 2
    assert "error: k must be in [1, 256], got 0" in capsys.readouterr().err
    assert main(["compare", sample, "--methods", "rredcot,loo", "--attr-permutations", "4", *no_model]) == 2
    assert "--attr-permutations is a setting of shapley, which is not being run" in capsys.readouterr().err
    assert main(["resample", sample, "--detector", "loo", "--det-variant", "l2", *no_model]) == 2
    err = capsys.readouterr().err
    assert "--det-variant is not a setting of detector 'loo'; its settings: --det-threshold, --det-trigger" in err
    with pytest.raises(SystemExit):  # argparse: not one of the choices, listing them
        main(["analyze", sample, "--est-aggregation", "median"])
    assert "invalid choice: 'median' (choose from 'mean_prob', 'seq_prob', 'geo_mean'" in capsys.readouterr().err
    data = tmp_path / "one.json"
    data.write_text(json.dumps([{"problem": "1+1?", "steps": ["So 2."], "final_answer_correct": True, "label": -1}]))
    argv = ["eval-diagnosis", "--data", str(data), "--detector", "min_sigma", "--loo-threshold", "0.2"]
    assert main([*argv, "--references", "none", "--model", "no-such-model"]) == 2
    assert "--loo-* options set detector 'loo', which is not evaluated" in capsys.readouterr().err


def test_generated_help_names_each_method_and_its_default(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--seg-k INT, --k INT target number of segments K (METHOD.md recommends 2-64)" in text
    assert "[hybrid, fixed_tokens, adaptive_entropy] (default 12 for hybrid; none for fixed_tokens" in text
    assert "--est-beta FLOAT weight of v-hat (the reference path from here) in Q-hat" in text
    assert "(default 1.0 for rredcot, continue_only; 0.0 for answer_only, own_answer)" in text
    assert "--boundaries {all,segmenter,states}" in text and "(default segmenter)" in text
