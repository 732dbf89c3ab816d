"""The app's analysis job on a tiny random transformer: R-hat first (the first look), then the full analysis;
one job per scoring work, shared by settings that reuse its scores."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.errors import MissingReferenceError, RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.jobs import JobManager
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.analyze import (
    AnalysisWork,
    analyze_traces,
    check_traces,
    provenance,
    start,
    write_results,
)

TRACE = Trace(
    question="Tom has 3 apples and buys 5 more. How many apples does he have?",
    cot="Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nTherefore, the final answer is \\boxed{8}.",
    reference_answer="8",
    reference_solution="3 + 5 = 8, so the answer is \\boxed{8}.",
)


def work(analyzer: Analyzer, k: int = 2, **options) -> AnalysisWork:
    return AnalysisWork(analyzer, TRACE, segmenters.get("hybrid")(k=k), estimators.get("rredcot")(**options))


def fresh(tiny) -> Analyzer:
    return Analyzer(tiny, AnalysisConfig(boundaries="segmenter"))


class Recorder:
    """Stands in for a Job: records the phases the work reports, and whether a first look existed at each."""

    def __init__(self, work: AnalysisWork):
        self.work = work
        self.phases: list[tuple[str, bool]] = []

    def progress(self, done: int, total: int, phase: str) -> None:
        self.phases.append((phase, self.work.first_look_ready()))


def test_the_first_look_is_ready_before_v_hat_is_scored_and_equals_r_hat_alone(tiny):
    analysis = work(fresh(tiny))
    assert analysis.pending > 0 and not analysis.first_look_ready() and analysis.first_look() is None
    recorder = Recorder(analysis)
    analysis.run(recorder)
    first_full = next(i for i, (phase, _) in enumerate(recorder.phases) if phase == "all values")
    assert [phase for phase, _ in recorder.phases[:first_full]] and all(
        phase == "R̂" for phase, _ in recorder.phases[:first_full]
    )
    assert all(ready for _, ready in recorder.phases[first_full:])  # v-hat is scored after R-hat is complete
    assert analysis.pending == 0
    look = analysis.first_look()
    answer_only = fresh(tiny).analyze(TRACE, analysis.segmenter, estimators.get("answer_only")(aggregation="seq_prob"))
    np.testing.assert_allclose(look.values.values, answer_only.values.values, atol=1e-9)
    assert look.segmentation.cuts == analysis.result().segmentation.cuts


def test_an_estimator_without_a_reference_solution_has_no_first_look(tiny):
    analysis = AnalysisWork(fresh(tiny), TRACE, segmenters.get("hybrid")(k=2), estimators.get("answer_only")())
    assert not analysis.first_look_ready()
    analysis.analyzer.analyze(TRACE, analysis.segmenter, analysis.estimator)
    assert analysis.pending == 0 and not analysis.first_look_ready() and analysis.first_look() is None


def test_settings_that_reuse_the_scores_share_one_job(tiny):
    analyzer, jobs = fresh(tiny), JobManager()
    try:
        first = start(work(analyzer, k=2), jobs)
        again = start(work(analyzer, k=3), jobs)  # another K: the same candidate boundaries, the same scores
        assert work(analyzer, k=2).key == work(analyzer, k=3).key and again.id == first.id
        assert work(analyzer, trigger="\nSo: ").key != first.key  # another trigger is other scoring work
        assert jobs.wait(first).status == "done" and work(analyzer, k=3).pending == 0
    finally:
        jobs.shutdown()


def test_check_traces_names_the_skipped_and_what_could_run_them():
    bare = Trace("q", "I think it is \\boxed{4}.", correct=False)  # an outcome and an answer, no reference
    check = check_traces([TRACE, bare], estimators.get("rredcot")())
    assert check.runnable == [TRACE] and check.skipped == [bare]
    assert check.alternatives == ["own_answer", "uniform"]
    assert check.lines()[0].startswith("capability check: rredcot: runs on 1 of 2 records; 1 lack a reference")
    assert check.lines()[1].endswith("--estimator own_answer or uniform can run on them")
    with pytest.raises(RredcotError, match="cannot run on any of the 1 traces"):
        check_traces([bare], estimators.get("rredcot")()).require()
    with pytest.raises(RredcotError, match="--strict"):
        check_traces([TRACE, bare], estimators.get("rredcot")(), strict=True)


def test_work_on_a_trace_without_a_reference_says_what_it_lacks_before_any_scoring(tiny):
    """A pasted trace with no reference answer used to reach the estimator's series and end in "AttributeError:
    'NoneType' object has no attribute 'strip'"; the work is refused with what the trace lacks."""
    pasted = Trace("Tom has 3 boxes of 4 apples and eats 1. How many?", "3 * 4 = 12.\n12 - 1 = 11.\nThe answer is 11.")
    analyzer, line, rredcot = fresh(tiny), segmenters.get("line")(), estimators.get("rredcot")()
    for ask in (lambda: analyzer.pending(pasted, line, rredcot), lambda: AnalysisWork(analyzer, pasted, line, rredcot)):
        with pytest.raises(MissingReferenceError, match=r"estimator 'rredcot' needs .*a reference answer .*own_answer"):
            ask()
    own = AnalysisWork(analyzer, pasted, line, estimators.get("own_answer")())  # what the app falls back to
    result = own.result()
    assert result.values.estimator == "own_answer" and result.outcome == 1.0 and result.k == 2


def test_a_check_that_runs_on_nothing_says_what_the_traces_lack():
    bare = Trace("q", "I think it is \\boxed{4}.", correct=False)
    check = check_traces([bare, bare.with_changes(cot="It is \\boxed{5}.")], estimators.get("rredcot")())
    assert check.refusal() == (
        "estimator 'rredcot' cannot run on any of the 2 traces: 2 lack a reference answer; 2 lack a reference "
        "solution (the reference path for v-hat); own_answer, uniform can run on them"
    )
    assert check_traces([TRACE], estimators.get("rredcot")()).refusal() is None


def test_results_are_written_as_json_lines_or_one_csv_row_per_segment(tiny, tmp_path):
    analyzer = fresh(tiny)
    segmenter, estimator = segmenters.get("line")(), estimators.get("answer_only")()
    (result,) = analyze_traces(analyzer, [TRACE], segmenter, estimator)
    write_results([result], tmp_path / "out.jsonl")
    (record,) = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert record["k"] == 2 and record["estimator"] == "answer_only" and record["trace_hash"] == TRACE.content_hash
    np.testing.assert_allclose(record["sigma"], result.sigma)
    assert [s["text"] for s in record["segments"]] == ["Tom starts with 3 apples.\n", "He buys 5 more, so 3 + 5 = 8.\n"]
    write_results([result], tmp_path / "out.csv")
    rows = list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8")))
    assert [int(r["segment"]) for r in rows] == [1, 2] and rows[1]["text"] == "He buys 5 more, so 3 + 5 = 8."
    assert sum(float(r["sigma"]) for r in rows) == pytest.approx(result.sigma.sum())


def test_csv_segments_that_a_spreadsheet_would_run_start_with_a_quote(tiny, tmp_path):
    """``analyze --out x.csv`` wrote a segment starting with = or @ as it was: a formula in a spreadsheet."""
    hostile = Trace(
        question="What is 3 + 5?",
        cot='=HYPERLINK("http://x", "3 + 5")\n@SUM(3, 5) is 8.\n-3 + 11 = 8.\nThe answer is \\boxed{8}.',
        reference_answer="8",
    )
    segmenter, estimator = segmenters.get("line")(), estimators.get("answer_only")()
    (result,) = analyze_traces(fresh(tiny), [hostile], segmenter, estimator)
    write_results([result], tmp_path / "out.csv")
    rows = list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8", newline="")))
    assert [r["text"] for r in rows] == ['\'=HYPERLINK("http://x", "3 + 5")', "'@SUM(3, 5) is 8.", "'-3 + 11 = 8."]
    assert [float(r["sigma"]) for r in rows] == pytest.approx(result.sigma.tolist())  # numbers stay numbers


def test_exported_rows_carry_the_whole_text_the_model_fingerprint_and_the_settings(tiny):
    analysis = work(fresh(tiny))
    analysis.run(Recorder(analysis))
    about = provenance(analysis.analyzer, analysis.segmenter, {"estimator": "rredcot", "alpha": 0.5})
    assert about["model_fingerprint"] == str(tiny.info()["fingerprint"]) and about["segmenter"] == "hybrid"
    assert json.loads(about["method_settings"]) == {"alpha": 0.5, "estimator": "rredcot"}
    assert json.loads(about["segmenter_settings"])["k"] == 2
    rows = analysis.result().rows(preview=None)
    assert "".join(row["text"] for row in rows) in TRACE.cot  # every segment whole, as written
    assert max(len(row["text"]) for row in analysis.result().rows(preview=10)) <= 10  # only the view is cut
