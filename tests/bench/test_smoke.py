"""Every bench runs its main path in CI: on a tiny random model (``--model``), a small stored file or a few rows,
in seconds, and ends with the key=value line its docstring and docs/BENCHES.md name. A bench without a smoke
test here fails ``test_every_bench_has_a_smoke_test``, so a bench cannot rot unseen (issue 43 item 9)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from bench.smoke import BENCH, bench, last_line
from bench.test_quantization import KEYS as QUANTIZATION_KEYS

HELPERS = {"workers"}  # not a bench: the worker processes compare.py and trainer.py start


def test_every_bench_has_a_smoke_test():
    tests = {
        node.name
        for path in Path(__file__).parent.glob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef)
    }
    benches = {path.stem for path in BENCH.glob("*.py")} - HELPERS
    missing = sorted(name for name in benches if not any(t.startswith(f"test_{name}_smoke") for t in tests))
    assert not missing, f"benches without a smoke test (test_<bench>_smoke...): {missing}"


def test_scoring_smoke(tiny_model_dir, capsys):
    bench("scoring").main(["--model", str(tiny_model_dir), "--prefixes", "3", "--trace", "sample-train-failed"])
    assert list(last_line(capsys.readouterr().out)) == ["naive_s", "reuse_s", "speedup"]


def test_engine_smoke(tiny_model_dir, capsys):
    bench("engine").main(["--model", str(tiny_model_dir), "--k", "3", "--target-tokens", "60"])
    keys = ["naive_over_cached", "cached_over_floor", "floor", "reseg_ms", "model_calls_on_reseg"]
    assert list(last_line(capsys.readouterr().out)) == keys


def test_first_heatmap_smoke(tiny_model_dir, capsys):
    bench("first_heatmap").main(["--model", str(tiny_model_dir), "--traces", "2"])
    keys = ["worst_first_heatmap_s", "worst_trace", "worst_all_boundaries_s", "median_first_heatmap_s", "traces"]
    figures = last_line(capsys.readouterr().out)
    assert list(figures) == keys and figures["traces"] == "2"


def processbench_file(path: Path) -> Path:
    """Four ProcessBench records (two with a labelled first error, two correct), the format's own fields."""
    steps = ["Tom has 3 apples.", "He buys 5 more, so 3 + 5 = 8.", "The answer is \\boxed{8}."]
    wrong = ["Tom has 3 apples.", "He buys 5 more, so 3 + 5 = 9.", "The answer is \\boxed{9}."]
    records = [
        {"id": f"r{i}", "generator": "toy", "problem": "Tom has 3 apples and buys 5 more. How many?",
         "steps": text, "final_answer_correct": label < 0, "label": label}
        for i, (text, label) in enumerate([(steps, -1), (wrong, 1), (steps, -1), (wrong, 1)])
    ]  # fmt: skip
    path.write_text(json.dumps(records))
    return path


def test_diagnosis_smoke(tiny_model_dir, tmp_path, capsys):
    processbench_file(tmp_path / "gsm8k.json")
    argv = ["--model", str(tiny_model_dir), "--data", str(tmp_path), "--splits", "gsm8k", "--per-class", "2"]
    bench("diagnosis").main([*argv, "--detectors", "min_sigma,value_drop"])
    keys = ["n", "records_runnable_pct", "best_detector", "best_f1", "always_no_error_f1", "uniform_random_f1",
            "seconds_per_record", "beats_trivial", "beats_outcome_controls"]  # fmt: skip
    figures = last_line(capsys.readouterr().out)
    assert list(figures) == keys and figures["n"] == "4"


def test_credit_cost_smoke(tiny_model_dir, capsys):
    argv = ["--model", str(tiny_model_dir), "--lengths", "40", "--ks", "2", "--step-length", "12", "--step-k", "2"]
    bench("credit_cost").main(argv)
    keys = ["max_credit_tokens_over_completion", "rredcot_over_grpo_step_time_1k",
            "control_max_tokens_over_completion", "floor_max_tokens_over_completion"]  # fmt: skip
    assert list(last_line(capsys.readouterr().out)) == keys


def test_resets_smoke(tiny_model_dir, capsys):
    bench("resets").main(["--model", str(tiny_model_dir), "--problems", "2", "--reset-steps", "5"])
    keys = ["parents", "uniform_empty_chance", "former_uniform_empty_chance", "parents_under_4_steps_share",
            "former_parents_under_4_steps_share", "answer_only_share", "reset_steps"]  # fmt: skip
    assert list(last_line(capsys.readouterr().out)) == keys


def test_quick_preset_smoke(tiny_model_dir, capsys):
    bench("quick_preset").main(["--model", str(tiny_model_dir), "--prompts", "1", "--rollouts", "8", "--seeds", "1"])
    keys = ["best_prompts_per_step", "gain_per_min_1", "seconds_per_rollout_1"]
    assert list(last_line(capsys.readouterr().out)) == keys


def test_trainer_smoke(tiny_model_dir, tmp_path, monkeypatch, capsys):
    trainer = bench("trainer")
    monkeypatch.setattr(trainer, "OUT", tmp_path)  # its curves, not the last run's in bench/out
    trainer.main(["--model", str(tiny_model_dir), "--seeds", "1", "--steps", "1", "--eval-every", "1",
                  "--flat-check-steps", "1", "--eval-problems", "4"])  # fmt: skip
    figures = last_line(capsys.readouterr().out)
    keys = {"start_acc", "grpo_final", "rredcot_final", "srpo_final", "rrpo_final", "rredcot_minus_grpo",
            "correct_nonfinal_adv", "failed_nonfinal_adv", "uninformative_max_diff", "rredcot_over_grpo_step_time",
            "reset_empty_prefix_share", "reset_uniform_empty_chance", "reset_prefix_fraction",
            "localiser_parse_rate", "localiser_fallback_share", "localiser_fallback"}  # fmt: skip
    assert keys <= set(figures), keys - set(figures)
    assert (tmp_path / "trainer_curves.csv").is_file()


def test_sampling_smoke(tiny_model_dir, capsys):
    """Against an OpenAI-compatible fake server on the same tiny model (the bench's ``--url``: no vLLM)."""
    from fake_openai import FakeOpenAIServer

    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.model.loading import ModelConfig

    with FakeOpenAIServer(LanguageModel.load(ModelConfig(source=str(tiny_model_dir))), name="tinymodel") as server:
        argv = ["--model", str(tiny_model_dir), "--url", server.url, "--trace", "sample-train-failed"]
        bench("sampling").main([*argv, "--rollouts", "2", "--max-new-tokens", "4", "--k", "2"])
    keys = ["engine_over_local_tokens_per_s", "rollout_tokens_ratio", "mc_wall_ratio", "max_value_diff",
            "max_value_diff_in_ci", "control_value_diff_in_ci", "engine_states_differing",
            "control_states_differing"]  # fmt: skip
    assert list(last_line(capsys.readouterr().out)) == keys


def test_compare_smoke(capsys):
    """The report of the published run, from its stored per-trace file (no model)."""
    stored = Path(__file__).parents[2] / "docs" / "bench_data" / "compare_regraded_traces.json"
    bench("compare").main(["--report-from", str(stored)])
    figures = last_line(capsys.readouterr().out)
    keys = {"traces_drawn", "traces_scored", "headline_traces", "mc_split_half", "rredcot_pairs_nonfinal",
            "rredcot_over_ceiling", "rredcot_beats_controls", "position_pairs_nonfinal", "selected_qhat",
            "rredcot_spearman_nonfinal", "mc_grading"}  # fmt: skip
    assert keys <= set(figures) and figures["traces_scored"] == "71"


def test_import_parquet_smoke(tmp_path, monkeypatch, capsys):
    import_parquet = bench("import_parquet")
    monkeypatch.setattr(import_parquet, "OUT", tmp_path)
    import_parquet.main(["--rows", "200"])
    keys = ["rows", "import_s", "rows_per_s", "import_peak_mb", "stream_peak_mb", "stream_peak_mb_4x",
            "pandas_peak_mb", "trl_import_s"]  # fmt: skip
    figures = last_line(capsys.readouterr().out)
    assert list(figures) == keys and figures["rows"] == "200"


def test_store_sharing_smoke(capsys):
    bench("store_sharing").main(["--runs", "1", "--steps", "4", "--contexts", "2", "--calls", "5"])
    keys = ["import_cpu_s", "full_parser_cpu_s", "torch_import_cpu_s", "python_cpu_s", "held_ms", "burst_ms",
            "reopen_ms", "reader_alone_ms_p50", "reader_wait_ms_p50", "reader_wait_ms_max", "failures",
            "held_control_fails"]  # fmt: skip
    figures = last_line(capsys.readouterr().out)
    assert list(figures) == keys and figures["failures"] == "0"


def test_scale_smoke(tiny_model_dir, capsys):
    samples = Path(__file__).parents[2] / "rredcot_viz" / "sample_traces" / "arithmetic.jsonl"
    bench("scale").main(["--model", str(tiny_model_dir), "--traces", "2", "--data", str(samples)])
    figures = last_line(capsys.readouterr().out)
    assert list(figures) == ["traces", "one_proc_s", "two_proc_s", "speedup", "identical"]
    assert figures["traces"] == "2" and figures["identical"] == "true"


def test_quantization_smoke(tmp_path, capsys):
    """On a tiny model wide enough for bitsandbytes' 4-bit CPU kernels: fp32, 8-bit and nf4 loaded and compared."""
    from bench.smoke import save_tiny_model

    folder = save_tiny_model(tmp_path / "tiny64", hidden=64)
    argv = ["--models", str(folder), "--gsm8k", "0", "--repeats", "1", "--k", "3", "--max-chars", "400"]
    bench("quantization").main([*argv, "--heatmap-traces", "1", "--out", str(tmp_path / "runs.json")])
    figures = last_line(capsys.readouterr().out)
    assert list(figures) == QUANTIZATION_KEYS and figures["default_1p5b"] == "unmeasured"


def test_app_rerun_smoke(monkeypatch, capsys):
    """The app (AppTest, in this process) on a tiny model: the bench's K slider is found and moved, no model call."""
    import streamlit as st
    from tiny import tiny_lm

    from rredcot_viz.model.lm import LanguageModel

    tiny = tiny_lm(seed=5)
    monkeypatch.setattr(LanguageModel, "load", classmethod(lambda cls, config=None: tiny))
    st.cache_resource.clear()  # the app's resources are process-wide: a model cached earlier would be used
    try:
        bench("app_rerun").main(["--sample", "Two-leg train journey (hours", "--ks", "2,3"])
    finally:  # nor may the tiny model stay cached for the page tests that run later in this process
        st.cache_resource.clear()
    figures = last_line(capsys.readouterr().out)
    assert list(figures) == ["rerun_ms_median", "model_calls"] and figures["model_calls"] == "0"


@pytest.mark.integration
@pytest.mark.browser
def test_first_hour_smoke(capsys):
    """In headless Chromium against the app on the embedded model: the defaults, a paste, an upload, one sample
    live, a report and an RL run's import; the job flows (minutes) are tests/e2e's and the full bench's."""
    bench("first_hour").main(["--samples", "1", "--no-jobs"])
    figures = last_line(capsys.readouterr().out)
    keys = {"tracebacks", "errors_on_defaults", "paste_without_solution_ok", "natural_fields_ok", "samples",
            "duplicate_job_joined", "cancel_latency_s", "refresh_after_finish", "failed_job_reported",
            "paste_without_reference_ok", "stale_run_view"}  # fmt: skip
    assert keys <= set(figures), keys - set(figures)
    assert figures["tracebacks"] == "0" and figures["samples"] == "1"


def test_probe_smoke(tiny, tmp_path, capsys):
    bench("probe").main(["--limit", "8", "--folds", "2", "--out", str(tmp_path / "probe.json")], lm=tiny)
    keys = ["model", "fit_problems", "heldout_problems", "heldout_states", "probe_pairs", "probe_over_ceiling",
            "rredcot_pairs", "mc2_pairs_at_equal_cost", "probe_brier", "extra_tokens_per_trace"]  # fmt: skip
    assert list(last_line(capsys.readouterr().out))[: len(keys)] == keys
