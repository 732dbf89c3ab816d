"""RL runs (workflows/runs.py): an imported run stored by step and prompt with every completion kept, GRPO's
advantage logged or recomputed, RREDCoT's credit coupled from an analysis (values by hand), the disagreement,
the per-step table, a run trained here, and scoring a step's rollouts with a tiny model."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rl_logs import trl_run, verl_run

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import ConfigError, RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.importers import import_file
from rredcot_viz.workflows import runs
from rredcot_viz.workflows.dataset import DatasetRecord, save_run

TRL_STD = math.sqrt(1 / 3)  # sample std of the rewards [1, 0, 0]


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "store.duckdb")
    yield store
    store.close()


def imported(store, path):
    return runs.store_import(store, import_file(path))


def test_an_imported_trl_run_keeps_every_completion(store, tmp_path):
    stored, run = imported(store, trl_run(tmp_path / "grpo-out"))
    assert stored.collection == "run:grpo-out" and (run.rollouts, run.steps, run.prompts) == (12, 2, 2)
    assert store.collections()["run:grpo-out"] == 4  # identical completions are one trace, each a rollout
    listed = runs.rollout_runs(store)
    assert listed[["run_id", "kind", "label", "steps", "rollouts"]].values.tolist() == [
        [run.run_id, "rollouts", "grpo-out", 2, 12]
    ]
    metrics = store.train_metrics([run.run_id]).set_index("step")
    assert metrics.loc[1, "reward_mean"] == pytest.approx((2 + 0 + 0) / 3)  # accuracy + format of the right one
    assert metrics.loc[2, "zero_variance_groups"] == 1.0
    again = imported(store, trl_run(tmp_path / "grpo-out"))[1]
    assert again.run_id == run.run_id and len(runs.rollout_runs(store)) == 1  # importing again replaces it
    groups = runs.load_run(store, run.run_id)
    assert [(g.step, g.prompt, len(g.rollouts)) for g in groups] == [(1, 0, 3), (1, 1, 3), (2, 0, 3), (2, 1, 3)]
    first = groups[0].rollouts
    assert first[0].grpo_advantage == pytest.approx((2 / 3) / (TRL_STD + 1e-4))  # TRL's, as logged
    assert (first[0].reward, first[0].outcome, first[1].reward, first[1].outcome) == (2.0, 1.0, 0.0, 0.0)
    assert all(r.rredcot is None for g in groups for r in g.rollouts) and groups[0].disagreement is None


def test_a_second_run_with_the_same_completions_gets_its_traces(store, tmp_path):
    """Traces are stored once per text, so the second of two runs with the same completions got 0 traces."""
    first, _ = imported(store, trl_run(tmp_path / "grpo-a"))
    second, run = imported(store, trl_run(tmp_path / "grpo-b"))
    assert (first.new, second.new, second.distinct) == (4, 0, 4)
    assert store.collections() == {"run:grpo-a": 4, "run:grpo-b": 4}
    assert {t.content_hash for t in store.traces("run:grpo-b")} == {
        t.content_hash for t in runs.run_traces(store, run.run_id)
    }


def test_a_verl_run_gets_grpo_advantages_recomputed_as_verl_does(store, tmp_path):
    _, run = imported(store, verl_run(tmp_path / "rollouts"))
    groups = runs.load_run(store, run.run_id)
    advantages = [round(r.grpo_advantage, 4) for r in groups[0].rollouts]
    assert advantages == [round(1 / math.sqrt(2), 4), round(-1 / math.sqrt(2), 4)]  # (r - mean) / std(ddof=1)
    assert [r.grpo_advantage for r in groups[-1].rollouts] == [0.0, 0.0]  # all right at step 2
    payloads = [p for _, p in store.run_rollouts(run.run_id)]
    assert {p["advantage_source"] for p in payloads} == {"recomputed"}


def credit_analysis(store, run_id: str, sigmas: dict[float, list[float]]) -> str:
    """A dataset analysis of the run's traces whose sigma is set by outcome, two segments per trace."""
    records = []
    for trace in runs.run_traces(store, run_id):
        half = len(trace.cot) // 2
        record = DatasetRecord(trace.content_hash, None, trace.source, trace.outcome, k=2)
        record.sigma, record.segment_chars = sigmas[trace.outcome], [[0, half], [half, len(trace.cot)]]
        records.append(record)
    return save_run(store, {"name": "toy"}, segmenters.get("line")(), estimators.get("answer_only")(), records, "t")


def test_rredcot_credit_from_an_analysis_and_the_disagreement(store, tmp_path):
    _, run = imported(store, trl_run(tmp_path / "grpo-out"))
    analysis = credit_analysis(store, run.run_id, {1.0: [0.2, 0.8], 0.0: [-0.3, 0.3]})
    covering = runs.credit_analyses(store, run.run_id)
    assert covering[["run_id", "covered"]].values.tolist() == [[analysis, 4]]
    groups = runs.load_run(store, run.run_id, analysis)
    right, wrong, _ = groups[0].rollouts
    # value_baseline by hand, group outcomes [1, 0, 0]: mean 1/3, population std sqrt(2)/3
    spread = math.sqrt(2) / 3
    assert right.rredcot == pytest.approx([(1 - 1 / 3) / spread, (1 - (1 / 3 + 0.2)) / spread])
    assert wrong.rredcot == pytest.approx([(0 - 1 / 3) / spread, (0 - (1 / 3 - 0.3)) / spread])
    half = [len(right.text) // 2, len(right.text) - len(right.text) // 2]
    grpo_right, grpo_wrong = (2 / 3) / (TRL_STD + 1e-4), (-1 / 3) / (TRL_STD + 1e-4)
    gaps = [
        *(n * abs(a - grpo_right) for n, a in zip(half, right.rredcot, strict=True)),
        *(2 * n * abs(a - grpo_wrong) for n, a in zip(half, wrong.rredcot, strict=True)),  # two wrong rollouts
    ]
    assert groups[0].disagreement == pytest.approx(sum(gaps) / (3 * sum(half)))
    assert groups[0].opposed == 0.0  # value_baseline never pushes a right rollout down or a wrong one up
    assert groups[2].disagreement == pytest.approx(0.0)  # all right: both give zero
    assert runs.disagreeing_groups(groups, 2) == [groups[0], groups[1]]
    table = runs.step_table(groups).set_index("step")
    assert table.loc[1, "credited"] == 6 and table.loc[1, "disagreement"] == pytest.approx(groups[0].disagreement)
    assert table.loc[2, "rredcot_abs_mean"] == 0.0 and table.loc[1, "correct_share"] == pytest.approx(1 / 3)
    frame = runs.groups_frame(groups)
    assert frame["question"].tolist()[:2] == ["What is 2 + 3?", "What is 4 * 2?"]
    assert [g.step for g in runs.prompt_groups(groups, 1)] == [1, 2]


def test_a_run_trained_here_uses_the_trainers_sigma(store):
    store.put_run("train-x", "train", {"name": "tiny"}, {"method": "rredcot"}, 0)
    text = "First step.\nSecond step."
    store.put_train_rollouts(
        "train-x",
        5,
        [
            {"group": "base", "problem": 7, "question": "Q?", "text": text, "reward": 1.0,
             "sigma": [0.4, 0.6], "segment_chars": [[0, 12], [12, 25]]},
            {"group": "base", "problem": 7, "question": "Q?", "text": text, "reward": 0.0},
        ],
    )  # fmt: skip
    (group,) = runs.load_run(store, "train-x")
    right, wrong = group.rollouts
    assert (right.grpo_advantage, wrong.grpo_advantage) == (1.0, -1.0)  # the trainer's population std
    assert right.rredcot == pytest.approx([(1 - 0.5) / 0.5, (1 - 0.9) / 0.5]) and wrong.rredcot is None
    assert runs.rollout_runs(store)["label"].tolist() == ["rredcot"]
    with pytest.raises(ConfigError, match="no run 'nope'"):
        runs.load_run(store, "nope")


def test_scoring_a_steps_rollouts_gives_the_credit(store, tmp_path, tiny):
    _, run = imported(store, trl_run(tmp_path / "grpo-out"))
    analyzer = Analyzer(tiny)
    done = []
    analysis = runs.score_rollouts(
        analyzer, store, run.run_id, segmenters.get("line")(), estimators.get("answer_only")(), 1,
        lambda d, t: done.append((d, t)),
    )  # fmt: skip
    assert done[-1] == (4, 4)  # the distinct traces of step 1
    groups = runs.load_run(store, run.run_id, analysis)
    step_one = [r for g in groups if g.step == 1 for r in g.rollouts]
    assert all(r.rredcot is not None and len(r.rredcot) == len(r.segment_chars) for r in step_one)
    assert all(sum(r.sigma) == pytest.approx(r.outcome, abs=1e-6) for r in step_one)  # exact_sum
    assert all(r.text[r.segment_chars[0][0] : r.segment_chars[-1][1]].strip() for r in step_one)
    assert np.isfinite([g.disagreement for g in groups if g.step == 1]).all()


def test_scoring_with_an_estimator_that_cannot_run_is_refused_before_any_model_work(store, tmp_path):
    """It used to "succeed": a job "done · 12/12" whose every row held an error, and a credit selector."""
    _, run = imported(store, trl_run(tmp_path / "grpo-out"))  # a reference answer, no reference solution
    check = runs.scoring_check(store, run.run_id, estimators.get("rredcot")())
    assert check.runnable == [] and len(check.skipped) == 4
    with pytest.raises(RredcotError, match=r"^estimator 'rredcot' cannot run on any of the 4 traces: 4 lack a "
                       r"reference solution .*; answer_only, own_answer, mc, uniform can run on them$"):  # fmt: skip
        runs.score_rollouts(None, store, run.run_id, segmenters.get("line")(), estimators.get("rredcot")())
    assert runs.credit_analyses(store, run.run_id).empty and store.dataset_runs().empty  # nothing was stored
    assert len(runs.scoring_check(store, run.run_id, estimators.get("answer_only")(), 1).runnable) == 4


def test_an_analysis_whose_every_record_failed_is_no_credit(store, tmp_path):
    _, run = imported(store, trl_run(tmp_path / "grpo-out"))
    traces = runs.run_traces(store, run.run_id)
    failed = [DatasetRecord(t.content_hash, None, t.source, t.outcome, error="boom") for t in traces]
    save_run(store, {"name": "toy"}, segmenters.get("line")(), estimators.get("answer_only")(), failed, "all failed")
    assert runs.credit_analyses(store, run.run_id).empty  # no "RREDCoT credit from" choice for it
    credited = credit_analysis(store, run.run_id, {1.0: [0.2, 0.8], 0.0: [-0.3, 0.3]})
    assert runs.credit_analyses(store, run.run_id)[["run_id", "covered"]].values.tolist() == [[credited, 4]]


def test_run_labels():
    assert runs.run_label("/runs/grpo-out/completions") == "grpo-out"
    assert runs.run_label("/runs/rollouts") == "rollouts"
    assert runs.run_label("data.parquet") == "data.parquet"
