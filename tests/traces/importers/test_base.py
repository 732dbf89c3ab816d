"""What every importer shares (importers/base.py): format detection on the shared data files and the inline
samples, the inline mappings of each format, and import reports (issues with file and line, counts)."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

from rredcot_viz.paths import shared_data_dir
from rredcot_viz.traces.importers import detect_format, import_file, importers
from rredcot_viz.traces.trace import Trace

from .samples import MINE, QUESTION, SAMPLES, assert_steps_tile, claimants, raw_records, write_jsonl

DETECTED = {
    "processbench/gsm8k.json": "processbench",
    "processbench/math.json": "processbench",
    "gsm8k/test.jsonl": "gsm8k",
    "gsm8k/example_model_solutions.jsonl": "gsm8k_solutions",
    "math/math500_test.jsonl": "math",
    "competition/aime24_qwen25math.jsonl": "math",
    "competition/amc23.jsonl": "math",
    "traces/thought_anchors_r1distill_traces.jsonl": "thought_anchors",
    "traces/qwen_math_cot_100_rm_scored.jsonl": "qwen_rm",
    "prm800k/raw_samples_openr.jsonl": "prm800k",
    "prm800k/phase2_test_one_example.json": "prm800k",
    "step_labels/math_shepherd_samples.jsonl": "math_shepherd",
    "step_labels/math_aps_samples.jsonl": None,  # a prefix tree, none of these formats
}


@pytest.mark.parametrize("relative", sorted(DETECTED))
def test_auto_detection(relative: str) -> None:
    records = raw_records(relative)
    expected = DETECTED[relative]
    for record in (records[0], records[-1]):
        mine = [name for name in MINE if importers.get(name).sniff(record)]
        assert mine == ([] if expected is None else [expected])
        assert not importers.get("native").sniff(record)
        if expected is not None:
            assert claimants(record) == [expected]
            assert detect_format(record) == expected


def test_every_shared_file_is_covered() -> None:
    present = {str(p.relative_to(shared_data_dir())) for p in shared_data_dir().rglob("*.json*")}
    if not present:
        pytest.skip(f"no shared data files under {shared_data_dir()}")
    assert present <= set(DETECTED)


@pytest.mark.parametrize("name", MINE)
def test_inline_sample_is_detected_and_converts(name: str) -> None:
    record = SAMPLES[name]
    assert claimants(record) == [name]
    assert detect_format(record) == name
    traces = importers.get(name)().convert(copy.deepcopy(record))
    assert traces and all(t.source == name for t in traces)
    for trace in traces:
        if trace.steps is not None:
            assert_steps_tile(trace)


def test_inline_mappings() -> None:
    def one(name: str) -> Trace:
        (trace,) = importers.get(name)().convert(copy.deepcopy(SAMPLES[name]))
        return trace

    pb = one("processbench")
    assert (pb.first_error, pb.correct, pb.trace_id, pb.metadata) == (1, False, "pb-1", {"generator": "toy"})

    gsm = one("gsm8k")
    assert gsm.reference_solution == "He has 2 apples.\nThen 2 + 3 = 5 apples."
    assert gsm.steps == ("He has 2 apples.", "Then 2 + 3 = 5 apples.")
    assert (gsm.reference_answer, gsm.answer, gsm.correct, gsm.first_error) == ("5", "5", True, None)

    wrong, right = importers.get("gsm8k_solutions")().convert(copy.deepcopy(SAMPLES["gsm8k_solutions"]))
    assert (wrong.metadata["model"], wrong.correct, wrong.answer) == ("6b_finetuning", False, "6")
    assert (right.metadata["model"], right.correct) == ("175b_verification", True)
    assert wrong.reference_solution == "He has 2 + 3 = 5 apples." and wrong.reference_answer == "5"
    assert "<<2*3=6>>" in wrong.cot  # the model's own text is kept as written

    ma = one("math")
    assert ma.trace_id == "test/prealgebra/1.json" and ma.metadata["kind"] == "reference_solution"
    assert ma.cot == ma.reference_solution and ma.answer == "\\frac{3}{4}" and ma.correct is True

    prm = one("prm800k")
    assert (prm.first_error, prm.step_labels, prm.final_answer, prm.outcome) == (1, (0, -1), "6", 0.0)
    assert prm.cot == "He has 2 apples.\n\nHe buys 3, so 2 * 3 = 6.\n\n# Answer\n\n6"

    ta = one("thought_anchors")
    assert ta.steps == ("He has 2 apples.\n\nThen 3 more makes 5.", "Done.")
    assert ta.step_values["mc_accuracy"] == (0.9, 1.0)
    assert math.isnan(ta.step_scores["ta_resampling_importance"][1])
    assert ta.metadata["missing_step_values"] == {"ta_resampling_importance": [1]}
    assert ta.metadata["depends_on"] == [[], [0]] and ta.metadata["respaced_chunks"] == 1
    assert ta.trace_id == "toy-model/correct_base_solution/problem_1" and ta.prompt.endswith("<think>\n")

    good, bad = importers.get("qwen_rm")().convert(copy.deepcopy(SAMPLES["qwen_rm"]))
    assert (good.trace_id, good.correct, good.metadata["rm_score"]) == ("7/0", True, 1.5)
    assert (bad.trace_id, bad.correct, bad.final_answer, bad.metadata["sample"]) == ("7/1", False, "6", 1)

    ms = one("math_shepherd")
    assert ms.question == QUESTION
    assert ms.steps == ("Step 1: He has 2 + 3 = 5 apples.", "Step 2: The answer is: 6")
    assert ms.cot == "Step 1: He has 2 + 3 = 5 apples.\nStep 2: The answer is: 6"
    assert (ms.step_labels, ms.first_error) == ((1, -1), 1)


def test_bad_json_line_is_reported_and_import_continues(tmp_path: Path) -> None:
    good = SAMPLES["gsm8k"]
    path = write_jsonl(tmp_path / "bad.jsonl", [good, '{"question": "unterminated', good])
    report = import_file(path)
    assert report.format == "gsm8k" and report.records_read == 3 and len(report.traces) == 2
    (issue,) = report.issues
    assert (issue.file, issue.line, issue.record) == ("bad.jsonl", 2, 1)
    assert str(issue).startswith("bad.jsonl:line 2: ") and "invalid JSON" in issue.message


@pytest.mark.parametrize(
    ("name", "drop"),
    [
        ("processbench", ("label",)),
        ("gsm8k", ("answer",)),
        ("gsm8k_solutions", ("ground_truth",)),
        ("math", ("problem",)),
        ("prm800k", ("question", "ground_truth_answer")),
        ("thought_anchors", ("trace",)),
        ("qwen_rm", ("gt",)),
        ("math_shepherd", ("label",)),
    ],
)
def test_missing_field_names_the_field(tmp_path: Path, name: str, drop: tuple[str, ...]) -> None:
    record = copy.deepcopy(SAMPLES[name])
    parent = record
    for key in drop[:-1]:
        parent = parent[key]
    del parent[drop[-1]]
    report = import_file(write_jsonl(tmp_path / "missing.jsonl", [SAMPLES[name], record]), name)
    assert report.records_read == 2 and report.records_failed == 1
    (issue,) = report.issues
    assert issue.line == 2 and issue.message.startswith(f"{name}: ") and repr(drop[-1]) in issue.message


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        ("processbench", lambda r: r.update(label=2), "out of range"),
        ("processbench", lambda r: r.update(steps=[]), "steps"),
        ("math", lambda r: r.pop("solution"), "solution"),
        ("prm800k", lambda r: r["label"]["steps"][0]["completions"][0].update(rating=5), "rating 5"),
        ("prm800k", lambda r: r["label"]["steps"][1]["completions"][0].update(text="other"), "pre-generated step 1"),
        ("thought_anchors", lambda r: r["chunks"][1].update(chunk="Not in the trace."), "chunk 1"),
        ("thought_anchors", lambda r: r["chunks"][1].update(chunk_idx=5), "chunk_idx 5"),
        ("qwen_rm", lambda r: r["score"].pop(), "differ in length"),
        ("math_shepherd", lambda r: r.update(label=r["label"].replace(" +\n", " ?\n")), "step tag 1"),
        ("math_shepherd", lambda r: r.update(input=r["input"].replace("Step 1:", "First:")), "Step 1:"),
        ("gsm8k_solutions", lambda r: r["6b_finetuning"].update(solution="  "), "6b_finetuning"),
    ],
)
def test_malformed_records_become_issues(tmp_path: Path, name: str, change: Any, expected: str) -> None:
    record = copy.deepcopy(SAMPLES[name])
    change(record)
    report = import_file(write_jsonl(tmp_path / "malformed.jsonl", [record]), name)
    assert not report.traces and report.records_failed == 1
    assert expected in report.issues[0].message, report.issues[0].message


def test_report_counts_add_up(tmp_path: Path) -> None:
    good = SAMPLES["qwen_rm"]  # two traces per record
    missing = {key: value for key, value in good.items() if key != "idx"}
    lines = [good, "not json", good, missing, "[1, 2]", good]
    report = import_file(write_jsonl(tmp_path / "mixed.jsonl", lines))
    assert report.format == "qwen_rm" and report.records_read == 6
    assert report.records_failed == 3 and [i.line for i in report.issues] == [2, 4, 5]
    assert [i.record for i in report.issues] == [1, 3, 4]
    assert len(report.traces) == 2 * (report.records_read - report.records_failed)
    summary = report.summary()
    assert summary["correct"] + summary["failed"] + summary["outcome_unknown"] == summary["traces"] == 6
