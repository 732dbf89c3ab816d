"""The evaluation workflow shared by eval-diagnosis and the Diagnose page: seeded samples in file order,
the baselines beside the detectors, a stored run the page can read back, and balanced samples."""

from __future__ import annotations

import json

import numpy as np
import pytest
from planted import RECORD, STEP_RECORDS
from toy import ToyLanguageModel

from rredcot_viz.diagnosis import NO_ERROR, detectors
from rredcot_viz.diagnosis.resample import ResetConfig
from rredcot_viz.diagnosis.verdicts import evaluation_runs, load_evaluation
from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.jobs import Cancelled
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.diagnose import (
    EvaluationRecord,
    EvaluationRequest,
    RecordSelection,
    calibrate_verifier,
    plan_evaluation,
    run_evaluation,
    sample_shortfall,
    seeded_sample,
    store_evaluation,
)
from rredcot_viz.workflows.trace_diagnosis import diagnose_trace, edit_and_rescore


def test_a_seeded_sample_keeps_file_order_and_is_reproducible():
    traces = [Trace("q", f"step {i}", trace_id=str(i)) for i in range(10)]
    first = [t.trace_id for t in seeded_sample(traces, 4, seed=3)]
    assert first == sorted(first, key=int) and len(set(first)) == 4
    assert first == [t.trace_id for t in seeded_sample(traces, 4, seed=3)]
    assert seeded_sample(traces, None, 0) == traces and seeded_sample(traces, 50, 0) == traces


def test_an_evaluation_runs_stores_and_reads_back(tiny, tmp_path):
    data = tmp_path / "tiny_split.json"
    data.write_text(json.dumps(STEP_RECORDS))
    request = EvaluationRequest(
        data, {"min_sigma": {"estimator": "uniform"}}, references="none", selection=RecordSelection(sample=4)
    )
    reports: list[tuple[str, int, int]] = []
    outcome = run_evaluation(tiny, request, lambda name, done, total: reports.append((name, done, total)))
    assert outcome.split == "tiny_split (random 4, seed 0)" and len(outcome.traces) == 4
    assert outcome.notes[0].startswith("4 traces from tiny_split.json (processbench)")
    # uniform credit is never negative, so min_sigma says "no error" on every trace
    evaluation = outcome.evaluations[0]
    assert evaluation.predictions == [-1] * 4 and evaluation.labels == [t.first_error for t in outcome.traces]
    assert reports[-1] == ("min_sigma", 4, 4)
    assert [row["detector"] for row in outcome.rows] == [
        "min_sigma[uniform]", "always_no_error", "always_first", "always_last", "uniform_random",
        "outcome_then_first", "outcome_then_last", "outcome_then_random",
    ]  # fmt: skip
    store = Store(tmp_path / "store.duckdb")
    run_id = store_evaluation(store, tiny, outcome, request)
    runs = evaluation_runs(store)
    assert runs["run_id"].tolist() == [run_id] and runs["split"][0] == outcome.split
    table, details = load_evaluation(store, run_id)
    assert table["detector"].tolist()[0] == "min_sigma[uniform]"
    assert details["min_sigma[uniform]"]["predictions"] == [-1] * 4
    store.close()


def test_the_verifier_threshold_is_calibrated_on_another_file(tmp_path):
    def rule(context: str) -> dict[str, float]:  # "Yes" is likely unless the step under question says "= 5"
        if not context.endswith("Answer Yes or No. A "):
            return {}
        step = context.rsplit("Step ", 2)[-2]
        return {"Y": 0.1 if "= 5" in step else 0.8, "N": 0.8 if "= 5" in step else 0.1}

    records = [
        {
            "problem": "2 + 2?",
            "steps": ["1 + 1 = 2.", "2 + 2 = 5.", "So 5."],
            "final_answer_correct": False,
            "label": 1,
        },
        {"problem": "1 + 1?", "steps": ["1 + 1 = 2.", "So 2."], "final_answer_correct": True, "label": -1},
    ]
    calibration_file = tmp_path / "calibration.json"
    calibration_file.write_text(json.dumps(records))
    options = {"step_verifier": {"yes": "Y", "no": "N"}}
    request = EvaluationRequest(tmp_path / "other.json", options, references="none")
    calibration = EvaluationRequest(calibration_file, options, references="none")
    calibrated, note = calibrate_verifier(ToyLanguageModel(rule), request, calibration)
    # p(Yes) is 8/9 on good steps and 1/9 on the "= 5" step: the midpoint between them separates both records
    assert calibrated.detectors["step_verifier"] == {"yes": "Y", "no": "N", "threshold": pytest.approx(0.5)}
    assert request.detectors["step_verifier"] == {"yes": "Y", "no": "N"}  # the original request is unchanged
    assert note.startswith("step_verifier threshold 0.500 chosen on calibration.json (2 records; F1 there 100.0")
    one_kind = tmp_path / "errors_only.json"
    one_kind.write_text(json.dumps(records[:1]))
    with pytest.raises(RredcotError, match="needs erroneous and correct records"):
        calibrate_verifier(ToyLanguageModel(rule), request, EvaluationRequest(one_kind, options, references="none"))


def test_balanced_sample_holds_both_classes_in_file_order():
    traces = [RECORD.with_changes(trace_id=f"e{i}") for i in range(10)]
    traces += [RECORD.with_changes(trace_id=f"c{i}", first_error=-1, correct=True) for i in range(3)]
    sample = seeded_sample(traces, 6, seed=1, balanced=True)
    ids = [t.trace_id for t in sample]
    assert sum(i.startswith("e") for i in ids) == 3 and sum(i.startswith("c") for i in ids) == 3
    assert ids == sorted(ids, key=[t.trace_id for t in traces].index)
    assert len(seeded_sample(traces, 10, seed=1, balanced=True)) == 8  # 5 erroneous, and all 3 correct


def test_each_detector_is_stored_as_it_finishes_and_a_stopped_run_keeps_them(tiny, tmp_path):
    data = tmp_path / "tiny_split.json"
    data.write_text(json.dumps(STEP_RECORDS))
    detectors = {"min_sigma": {"estimator": "uniform"}, "value_drop": {"estimator": "uniform"}}
    request = EvaluationRequest(data, detectors, references="none", selection=RecordSelection(sample=4))
    store = Store(tmp_path / "store.duckdb")
    record = EvaluationRecord(store, tiny, request, plan_evaluation(request))
    assert store.run(record.run_id)["status"] == "running"  # recorded before any model work
    seen: list[tuple[str, bool]] = []

    def finished(evaluation) -> None:  # the result is in the store when the caller hears of it
        seen.append((evaluation.detector, store.result(f"{record.run_id}:{evaluation.detector}") is not None))

    def progress(name: str, done: int, total: int) -> None:
        if name == "value_drop" and done:
            raise Cancelled("stopped by the user")  # as a cancelled job or Ctrl-C would, mid-detector

    with pytest.raises(Cancelled):
        record.run(progress, finished)
    assert seen == [("min_sigma[uniform]", True)]
    run = store.run(record.run_id)
    assert run["status"] == "stopped" and run["finished_at"] is not None
    assert [row["detector"] for row in run["summary"]["table"]][:2] == ["min_sigma[uniform]", "always_no_error"]
    assert evaluation_runs(store).empty  # the Diagnose page lists finished runs only

    whole = EvaluationRecord(store, tiny, request, plan_evaluation(request)).run()
    assert store.run(whole.run_id)["status"] == "done"
    assert evaluation_runs(store)["run_id"].tolist() == [whole.run_id]
    store.close()


def test_a_sample_the_file_cannot_fill_is_named():
    errors = [RECORD.with_changes(trace_id=f"e{i}") for i in range(5)]
    balanced = RecordSelection(sample=6, balanced=True)
    assert sample_shortfall(errors, balanced) == (
        "the balanced sample of 6 holds 3 records: the file has only 0 correct (of 3 asked) labelled records. "
        "F1 is undefined (n/a) without both kinds."
    )
    correct = [RECORD.with_changes(trace_id="c0", first_error=-1, correct=True)]
    assert sample_shortfall(errors + correct, balanced).startswith(
        "the balanced sample of 6 holds 4 records: the file has only 1 correct (of 3 asked)"
    )
    assert sample_shortfall(errors + correct * 3, balanced) is None
    assert sample_shortfall(errors, RecordSelection(sample=9)) == (
        "asked for a sample of 9 records; the file has 5, so all are evaluated"
    )
    assert sample_shortfall(errors, RecordSelection()) is None


WRONG = Trace("What is 2 + 3?", "2 + 3 = 5.\nSo it is 6.\nThe answer is \\boxed{6}.", reference_answer="5")


def test_a_trace_is_diagnosed_by_the_detectors_it_can_feed_beside_its_richest_value_curve(tiny):
    chosen = {"min_sigma": detectors.get("min_sigma")(), "value_drop": detectors.get("value_drop")(estimator="rredcot")}
    diagnosis = diagnose_trace(Analyzer(tiny), WRONG, segmenters.get("line")(), chosen)
    assert diagnosis.lacking == {"value_drop": ["reference_solution"]}  # asked for rredcot: needs a solution
    assert list(diagnosis.verdicts) == ["min_sigma[answer_only]"]  # auto: the richest the trace can feed
    assert diagnosis.curve_estimator == "answer_only" and diagnosis.curve.outcome == 0.0
    assert diagnosis.curve_note.startswith("Values from `answer_only`: this trace has a reference answer but no")
    verdict = diagnosis.verdicts["min_sigma[answer_only]"]
    assert len(diagnosis.segments) == diagnosis.curve.k == len(verdict.scores) == 2
    assert verdict.prediction in (NO_ERROR, int(np.argmin(diagnosis.curve.sigma)))
    bare = diagnose_trace(Analyzer(tiny), Trace("q", "Some text.\nMore text."), segmenters.get("line")(), {})
    assert bare.curve is None and bare.curve_note.startswith("No value curve: this trace has no outcome label")


def test_an_edit_is_rescored_toward_the_reference_answer_and_refused_without_one(tiny):
    config = ResetConfig(suffixes=1, max_new_tokens=4)
    edited = edit_and_rescore(Analyzer(tiny), WRONG, segmenters.get("line")(), 2, "So it is 5.\n", config)
    assert edited.original.values.estimator == edited.edited.values.estimator == "answer_only"
    assert "So it is 5." in edited.edited_trace.cot and len(edited.continuations) == 1
    own = Trace("What is 2 + 3?", "2 + 3 = 5.\nSo it is 6.\nThe answer is \\boxed{6}.", correct=False)
    with pytest.raises(RredcotError, match="re-scoring an edit needs a reference answer: the edit drops the trace"):
        edit_and_rescore(Analyzer(tiny), own, segmenters.get("line")(), 2, "So it is 5.\n", config)
