"""bench/compare.py's issue-42 pieces: GSM8K problems read from shared/data, a trace stopped by the time budget
resumed at the state (and the row) where it stopped, ``--report-from``'s last line, and the CUDA path (refused
on a CPU; on a GPU the lean protocol runs on a tiny random model)."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from toy import ToySampler

from rredcot_viz.attribution.agreement import control_pair_order, split_half_pair_order
from rredcot_viz.model.backends import SamplerSpec

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "bench"))  # the bench scripts import their neighbours
compare = importlib.import_module("compare")
lean = importlib.import_module("comparison.lean")
problems = importlib.import_module("comparison.problems")
rows = importlib.import_module("comparison.rows")
saved = importlib.import_module("comparison.saved")
scoring = importlib.import_module("comparison.scoring")

ARGS = argparse.Namespace(
    screen=2, seed=11, min_lines=3, exclude_seed=None, split_seed=0, segmenter="line", k=0, mc_max_tokens=8,
    sampler="local", rows="issue42", min_nonfinal=2, model="toy", quantization="none", problems_from="gsm8k",
)  # fmt: skip
LINES = ["First 2 + 3 = 5.", "Then we check it.", "So it is five.", "Next we add none.", "The answer is 5."]


class CountingToy(ToySampler):
    """A toy sampler whose success rate depends on how many lines of working the state holds; counts its calls
    (one per state drawn)."""

    def __init__(self):
        super().__init__(lambda context: [0.1, 0.9, 0.5, 0.3, 0.7][min(context.count("\n"), 4)], answer="5")
        self.calls = 0

    def sample_after_prefixes(self, ids, requests, config=None, *, progress=None):
        self.calls += 1
        return super().sample_after_prefixes(ids, requests, config, progress=progress)


def drawn_trace(name: str = "t", problem: int = 0, lines: int = 4, correct: bool = True) -> dict:
    cot = "\n".join([*LINES[: lines - 1], LINES[-1] if correct else "The answer is 6."])
    return {"trace": name, "problem": problem, "split": "selection", "question": "2 + 3?", "prompt": "2 + 3?",
            "cot": cot, "reference_answer": "5", "reference_solution": "2 + 3 = 5", "correct": correct, "seed": 1,
            "pass_rate": 0.5}  # fmt: skip


def test_gsm8k_problems_come_from_shared_data_in_a_seeded_prefix_stable_order(tiny):
    path = problems.gsm8k_file()
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pool = problems.problem_pool(3, 42, "gsm8k")
    order = np.random.default_rng(42).permutation(len(records))
    for problem, index in zip(pool, order[:3], strict=True):
        record = records[index]
        assert problem.question == record["question"]
        assert problem.answer == record["answer"].rsplit("#### ", 1)[1].strip()
        assert "<<" not in problem.solution and "####" not in problem.solution
        assert problem.source == "gsm8k"
    assert problems.problem_pool(2, 42, "gsm8k") == pool[:2]
    assert problems.problem_pool(3, 43, "gsm8k") != pool
    answer = pool[0].answer
    texts = {0: [f"We add.\nWe check.\nThe answer is {answer}.", "We add.\nWe check.\nThe answer is 123456789."]}
    screened, drawn = problems.draw_from_samples(tiny, pool, texts, ARGS)
    assert screened == [{"problem": 0, "pass_rate": 0.5, "excluded": False}]
    assert [d["trace"] for d in drawn] == ["gsm8k-0-correct", "gsm8k-0-failed"]
    assert drawn[0]["reference_solution"] == pool[0].solution and drawn[0]["seed"] == problems.sample_seed(11, 0, 0)


def test_a_trace_stopped_between_states_resumes_at_the_state_where_it_stopped():
    whole = CountingToy()
    reference = scoring.score_trace(whole, SamplerSpec().build(whole), drawn_trace(), ARGS, scoring.RolloutStore())
    assert reference.k == 4 and reference.usable and whole.calls == 4
    assert set(reference.scores) == {"rredcot", "answer_only", "v_hat[whole,geo_mean]", "loo", "mc1", "mc2", "mc16"}
    assert [len(o) for o in reference.outcomes] == [rows.REFERENCE_N + 2] * 4

    first = CountingToy()
    saves: list[str] = []

    def on_save():  # the time budget runs out once two states are stored
        saves.append(json.dumps(store.snapshot()))
        if len(store.rollouts) == 2:
            store.deadline = float("-inf")

    store = scoring.RolloutStore(on_save=on_save)
    with pytest.raises(scoring.OutOfTime):
        scoring.score_trace(first, SamplerSpec().build(first), drawn_trace(), ARGS, store)
    saved = json.loads(saves[-1])  # what --out holds: each state written as it was drawn
    assert first.calls == 2 and len(saves) == 2
    assert [len(rollouts) for rollouts in saved["rollouts"].values()] == [rows.REFERENCE_N + 2] * 2
    assert len(saved["seconds"]) == 2 and saved["rows"] == {}

    second = CountingToy()  # the next sitting draws the two states left, then stops before the second row
    rows_put = []
    store = scoring.RolloutStore(saved, on_save=lambda: rows_put.append(len(store.rows)))
    original_put = store.put_row

    def put_then_stop(*args):
        original_put(*args)
        store.deadline = float("-inf")

    store.put_row = put_then_stop
    store.deadline = float("inf")
    with pytest.raises(scoring.OutOfTime):
        scoring.score_trace(second, SamplerSpec().build(second), drawn_trace(), ARGS, store)
    assert second.calls == 2 and list(store.rows) == ["t|rredcot"]
    kept = json.loads(json.dumps(store.snapshot()))

    third = CountingToy()  # the third sitting draws nothing and takes the stored row as it was
    store = scoring.RolloutStore(kept)
    result = scoring.score_trace(third, SamplerSpec().build(third), drawn_trace(), ARGS, store)
    assert third.calls == 0
    assert result.outcomes == reference.outcomes
    for name, values in reference.scores.items():
        np.testing.assert_allclose(result.scores[name], values, err_msg=name)
    assert result.seconds["rredcot"] == kept["rows"]["t|rredcot"]["seconds"]
    assert result.wall_seconds == pytest.approx(sum(kept["seconds"].values()) + sum(result.seconds[n] for n in
                                                [*rows.LEAN_ESTIMATORS, *rows.LEAN_ATTRIBUTIONS]))  # fmt: skip


def test_report_from_reprints_the_issue42_last_line_from_the_saved_file(tmp_path, capsys):
    drawn = [drawn_trace(f"p{p}-{c}", p, lines, c) for p, lines in ((0, 4), (1, 5)) for c in (True, False)]
    results = []
    for d in drawn:
        lm = CountingToy()
        results.append(scoring.score_trace(lm, SamplerSpec().build(lm), d, ARGS, scoring.RolloutStore()))
    usable = [r for r in results if r.usable]
    assert len(usable) >= 2
    for r, seconds in zip(results, (60.0, 120.0, 180.0, 240.0), strict=True):
        r.wall_seconds = seconds
    protocol = saved.protocol_of(ARGS) | {"precision": "float32/none"}
    screened = [{"problem": p, "pass_rate": 0.5, "excluded": False} for p in (0, 1)]
    path = tmp_path / "run.json"
    saved.save(path, protocol, screened, drawn, results, None, {"run": {"screen_seconds": 30.0}})
    compare.main(["--report-from", str(path)])
    out = capsys.readouterr().out.strip().splitlines()
    fields = dict(item.split("=", 1) for item in out[-1].split())
    counts = next(line for line in out if "traces," in line).split()
    assert counts[0] == str(sum(r.trace.outcome == 1.0 for r in usable)) and counts[4] == str(
        sum(r.trace.outcome == 0.0 for r in usable)
    )
    assert int(counts[2]) + int(counts[6]) == int(fields["nonfinal_pairs"])
    small = next(line for line in out if line.startswith("|R-hat| < 0.01")).split()
    segments = [sum(r.k - 1 for r in usable if r.trace.outcome == outcome) for outcome in (1.0, 0.0)]
    assert [int(small[5]), int(small[8])] == segments
    keys = ["model", "traces_scored", "problems", "mc_split_half", "rredcot_pairs", "rredcot_over_ceiling",
            "rhat_only_pairs", "vhat_only_pairs", "position_pairs", "reverse_position_pairs",
            "mc2_pairs_at_equal_cost", "minutes_per_trace"]  # fmt: skip
    assert list(fields)[: len(keys)] == keys
    assert fields["model"] == "toy" and fields["traces_scored"] == "4" and fields["problems"] == "2"
    assert fields["minutes_per_trace"] == "2.5" and fields["traces_usable"] == str(len(usable))
    position = [control_pair_order("position", [r.reference], final=False) for r in usable]
    agreeing, pairs = (sum(float(p[i][0]) for p in position) for i in (0, 1))
    assert fields["position_pairs"] == f"{agreeing / pairs:.3f}"
    halves = [split_half_pair_order([o[:16] for o in r.outcomes], float(r.trace.outcome)) or (0, 0) for r in usable]
    assert fields["mc_split_half"] == f"{sum(h[0] for h in halves) / sum(h[1] for h in halves):.3f}"
    ratio = float(fields["rredcot_pairs"]) / float(fields["mc_split_half"])
    assert float(fields["rredcot_over_ceiling"]) == pytest.approx(ratio, abs=2e-3)


def test_rhat_rise_is_the_highest_running_sum_of_its_non_final_credits():
    def result(credits: list[float]) -> rows.TraceResult:
        return rows.TraceResult(None, 0, "selection", 4, np.zeros(4), np.zeros(5), {"answer_only": np.array(credits)})

    assert lean.rise(result([0.0, 0.3, -0.1, 0.9])) == pytest.approx(0.3)
    assert lean.rise(result([-0.2, 0.1, 0.0, 1.0])) == 0.0


def test_problems_are_resampled_whole_by_the_bootstrap():
    results = [rows.TraceResult(None, problem, "selection", 4, np.zeros(4), np.zeros(4)) for problem in (3, 3, 7)]
    agreeing, pairs = lean.by_problem(results, (np.array([1.0, 2.0, 3.0]), np.array([3.0, 3.0, 3.0])))
    assert agreeing.tolist() == [3.0, 3.0] and pairs.tolist() == [6.0, 3.0]


def test_cuda_is_refused_on_a_cpu_before_anything_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    out = tmp_path / "never.json"
    with pytest.raises(SystemExit, match="no CUDA device"):
        compare.main(["--device", "cuda", "--rows", "issue42", "--workers", "1", "--out", str(out)])
    assert not out.exists()
    env = os.environ | {"PYTHON": sys.executable, "CUDA_VISIBLE_DEVICES": "", "OUT": str(out)}
    done = subprocess.run(["bash", str(ROOT / "bench" / "compare_cuda.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "refusing: this machine has no CUDA device" in done.stderr
    assert not out.exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (run on a GPU machine)")
def test_the_issue42_protocol_runs_on_a_tiny_random_model_on_the_gpu():
    from tiny import tiny_model, tiny_tokenizer

    from rredcot_viz.engine import AnalysisConfig, Analyzer
    from rredcot_viz.estimators import estimators
    from rredcot_viz.model.lm import LanguageModel

    lm = LanguageModel(tiny_model(0).to("cuda"), tiny_tokenizer(), name="tiny", fingerprint="tiny-cuda", device="cuda")
    args = argparse.Namespace(**(vars(ARGS) | {"segmenter": "hybrid", "k": 3, "mc_max_tokens": 6}))
    drawn = drawn_trace() | {"prompt": lm.format_prompt("2 + 3?")}
    result = scoring.score_trace(lm, SamplerSpec().build(lm), drawn, args, scoring.RolloutStore())
    assert result.k == 3 and [len(o) for o in result.outcomes] == [rows.REFERENCE_N + 2] * 3
    trace = problems.as_trace(drawn, lm.name)
    config = AnalysisConfig(scope="whole", boundaries="segmenter")
    for row, (name, options) in rows.estimator_rows("issue42").items():
        analysis = Analyzer(lm, config).analyze(trace, scoring.segmenter_of(args), estimators.get(name)(**options))
        assert len(analysis.sigma) == 3 and np.isfinite(analysis.sigma).all(), row
