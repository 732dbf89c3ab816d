"""The ProcessBench harness (diagnosis/processbench.py): the metric and baselines against hand-computed tables,
evaluation on planted errors, and segment predictions mapped onto the dataset's steps."""

from __future__ import annotations

import pytest
from planted import FAILED, GIVEN, RECORD, TRACE, analyzer, answer_rule, own_rule, rredcot_options
from toy import ToyLanguageModel

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.processbench import baseline_predictions, baselines, evaluate, f1_score, score, to_step
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.needs import describe
from rredcot_viz.traces.trace import Trace


def test_f1_fixture_and_edge_cases():
    assert f1_score(0.5, 0.8) == pytest.approx(0.6154, abs=1e-4)
    assert f1_score(0.0, 0.0) == 0.0 and f1_score(1.0, 0.0) == 0.0
    assert f1_score(None, 1.0) is None and f1_score(0.5, None) is None  # an empty class: undefined, not 0


def test_an_empty_class_gives_n_a_not_zero():
    only_errors = score("always_no_error", [-1, -1, -1], [0, 2, 1])  # a sample with no correct traces
    assert only_errors.acc_error == 0.0 and only_errors.acc_correct is None and only_errors.f1 is None
    row = only_errors.row()
    assert row["F1_%"] == "n/a (no correct samples)" and row["acc_correct_%"] == "n/a"
    assert row["correct_95%_CI"] == "n/a" and row["erroneous_95%_CI"] == "0-56"  # Wilson, 0 of 3
    assert score("x", [], []).row()["F1_%"] == "n/a (no erroneous and no correct samples)"


def test_accuracies_carry_wilson_intervals():
    result = score("x", [2] * 7 + [0] * 3 + [-1] * 4, [2] * 10 + [-1] * 4)  # 7 of 10 erroneous, 4 of 4 correct
    assert (result.hits_error, result.hits_correct) == (7, 4)
    row = result.row()
    assert row["erroneous_95%_CI"] == "40-89"  # wilson_interval(7, 10) = (0.3968, 0.8922)
    assert row["correct_95%_CI"] == "51-100" and row["F1_%"] == 82.4


def test_score_by_hand():
    labels = [2, 0, -1, -1, 1, -1]
    predictions = [2, 1, -1, 0, None, -1]  # erroneous: 1 of 3 exact; correct: 2 of 3 say "no error"
    result = score("x", predictions, labels)
    assert (result.n_error, result.n_correct) == (3, 3)
    assert result.acc_error == pytest.approx(1 / 3) and result.acc_correct == pytest.approx(2 / 3)
    assert result.f1 == pytest.approx(2 * (1 / 3) * (2 / 3) / 1.0) and result.failures == 1
    assert result.row()["F1_%"] == 44.4


def test_baselines_by_hand():
    traces = [
        Trace("q", "a\n\nb\n\nc", steps=("a", "b", "c"), first_error=-1),
        Trace("q", "a\n\nb", steps=("a", "b"), first_error=0),
        Trace("q", "a\n\nb\n\nc", steps=("a", "b", "c"), first_error=2),
    ]
    table = {b.name: b for b in baselines(traces)}
    assert (table["always_no_error"].acc_error, table["always_no_error"].acc_correct) == (0.0, 1.0)
    assert table["always_no_error"].f1 == 0.0  # both classes present: a real 0
    assert table["always_first"].acc_error == 0.5 and table["always_first"].acc_correct == 0.0
    assert table["always_last"].acc_error == 0.5  # trace 3's last step is its labelled error


def test_evaluation_harness_on_planted_errors():
    clean = Trace(
        "Add 3 and 4.",
        "aa\n\nbb\n\nThe answer is \\boxed{7}.",
        reference_answer="7",
        reference_solution="\\boxed{7}",
        steps=("aa", "bb\n\nThe answer is \\boxed{7}."),
        first_error=-1,
    )
    an = analyzer(ToyLanguageModel(answer_rule))
    evaluation = evaluate(detectors.get("min_sigma")(**rredcot_options()), an, [TRACE, clean], GIVEN)
    assert evaluation.predictions == [2, -1] and evaluation.scores.f1 == 1.0
    confusion = evaluation.confusion()
    assert confusion[3, 3] == 1 and confusion[0, 0] == 1


@pytest.mark.parametrize("name", ["sentence", "hybrid"])
def test_segment_predictions_map_onto_the_dataset_steps(tiny, name):
    an = Analyzer(tiny, AnalysisConfig(boundaries="states"))
    an.context(RECORD).score_stats()  # entropies for the hybrid segmenter
    segmentation = an.segment(RECORD, segmenters.get(name)())
    spans = RECORD.step_spans()
    for index, segment in enumerate(segmentation.segments):
        start, end = segment.char_span
        first = start + len(RECORD.cot[start:end]) - len(RECORD.cot[start:end].lstrip())
        expected = next(i for i, (low, high) in enumerate(spans) if low <= first < high)
        assert to_step(RECORD, segmentation, index) == expected
    assert to_step(RECORD, segmentation, -1) == -1
    if name == "sentence":  # "12 * 7 = 74." starts step 1; "So she reads 74 pages." is inside it
        texts = [s.text.strip() for s in segmentation.segments]
        assert to_step(RECORD, segmentation, texts.index("So she reads 74 pages.")) == 1
        assert to_step(RECORD, segmentation, texts.index("A week has 7 days.")) == 0


def test_outcome_then_baselines_by_hand():
    right = RECORD.with_changes(correct=True, first_error=-1)
    traces = [RECORD, right, RECORD.with_changes(first_error=2)]
    predictions = baseline_predictions(traces)
    assert predictions["outcome_then_first"] == [0, -1, 0]
    assert predictions["outcome_then_last"] == [2, -1, 2]
    rows = {s.name: s for s in baselines(traces)}
    last = rows["outcome_then_last"]
    assert (last.hits_error, last.n_error, last.hits_correct, last.n_correct) == (1, 2, 1, 1)
    assert last.f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert "outcome_then_first" not in {s.name for s in baselines([RECORD.with_changes(correct=None)])}


def test_evaluate_runs_only_what_can_run_and_names_what_the_rest_lack():
    an = analyzer(ToyLanguageModel(own_rule))
    unlabelled = FAILED.with_changes(correct=None)  # no outcome: the own target cannot be used
    evaluation = evaluate(detectors.get("loo")(trigger="="), an, [FAILED, unlabelled], GIVEN)
    assert evaluation.predictions == [2, None] and evaluation.detector == "loo[own]" and evaluation.method == "loo"
    assert evaluation.evidence[0]["target"] == "own" and evaluation.evidence[1] is None
    assert evaluation.scores.not_runnable == 1 and evaluation.scores.failures == 1
    assert evaluation.errors == [f"{unlabelled.short_id}: not run, lacks {describe(['outcome'])}"]
