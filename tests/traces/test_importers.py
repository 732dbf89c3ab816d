"""Importers against the real shared data files (skipped when a file is absent) and small inline records."""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from rredcot_viz.paths import shared_data_dir
from rredcot_viz.traces.importers import ImportReport, detect_format, import_file, importers, read_records
from rredcot_viz.traces.trace import Trace

MINE = (
    "gsm8k",
    "gsm8k_solutions",
    "math",
    "math_shepherd",
    "prm800k",
    "processbench",
    "qwen_rm",
    "thought_anchors",
)


def data_file(relative: str) -> Path:
    path = shared_data_dir() / relative
    if not path.is_file():
        pytest.skip(f"shared data file {relative} is absent (looked for {path})")
    return path


@cache
def _imported(relative: str) -> ImportReport:
    return import_file(shared_data_dir() / relative)


def imported(relative: str) -> ImportReport:
    data_file(relative)
    return _imported(relative)


def raw_records(relative: str) -> list[dict[str, Any]]:
    return [record for _, record in read_records(data_file(relative))]


def assert_steps_tile(trace: Trace) -> None:
    """step_spans() finds every step in order and the spans tile cot exactly."""
    spans = trace.step_spans()
    assert "".join(trace.cot[start:end] for start, end in spans) == trace.cot
    for index, ((start, end), step) in enumerate(zip(spans, trace.steps, strict=True)):
        piece = trace.cot[start:end]
        assert step in piece
        if index > 0:
            assert piece.startswith(step)


# ---------------------------------------------------------------- real files


@pytest.mark.parametrize(
    ("relative", "count", "erroneous", "answer_correct", "correct_but_wrong_step"),
    [("processbench/gsm8k.json", 400, 207, 200, 7), ("processbench/math.json", 1000, 594, 500, 94)],
)
def test_processbench(
    relative: str, count: int, erroneous: int, answer_correct: int, correct_but_wrong_step: int
) -> None:
    report = imported(relative)
    assert report.format == "processbench" and not report.issues
    assert len(report.traces) == report.records_read == count
    assert sum(t.first_error != -1 for t in report.traces) == erroneous
    assert sum(t.first_error == -1 for t in report.traces) == count - erroneous
    assert sum(bool(t.correct) for t in report.traces) == answer_correct
    assert sum(bool(t.correct) and t.first_error >= 0 for t in report.traces) == correct_but_wrong_step
    for trace, record in zip(report.traces, raw_records(relative), strict=True):
        assert -1 <= trace.first_error < len(trace.steps)
        assert trace.first_error == record["label"] and trace.trace_id == record["id"]
        assert list(trace.steps) == record["steps"]
        assert_steps_tile(trace)
        spans = trace.step_spans()
        assert [trace.cot[start:end].rstrip("\n") for start, end in spans] == record["steps"]


def test_prm800k_phase2_example() -> None:
    (trace,) = imported("prm800k/phase2_test_one_example.json").traces
    assert trace.first_error == 6
    assert len(trace.steps) == 13
    assert trace.step_labels == (1, 0, 1, 1, 1, 1, -1)
    assert (trace.final_answer, trace.reference_answer) == ("7200", "28800")
    assert trace.outcome == 0.0
    assert trace.reference_solution and trace.source == "prm800k" and trace.metadata["phase"] == 2
    assert_steps_tile(trace)


def test_prm800k_raw_samples() -> None:
    report = imported("prm800k/raw_samples_openr.jsonl")
    assert report.format == "prm800k" and not report.issues and len(report.traces) == 6
    phases = [t.metadata["phase"] for t in report.traces]
    assert phases == [1, 2, 1, 1, 1, 2]
    assert [t.first_error for t in report.traces] == [-1, 6, -1, -1, None, -1]  # line 5 gave up
    assert report.traces[1].content_hash == imported("prm800k/phase2_test_one_example.json").traces[0].content_hash
    line1, line5, line6 = report.traces[0], report.traces[4], report.traces[5]
    assert line1.metadata["human_steps"] == [1] and len(line1.steps) == 6  # step 2 is the human replacement
    assert line5.metadata["human_steps"] == [7] and len(line5.steps) == 8  # last step has no completion at all
    assert line6.step_labels == (1,) * 12 and line6.metadata["is_initial_screening_question"]
    for trace in report.traces:
        assert set(trace.step_labels) <= {-1, 0, 1}
        assert len(trace.step_labels) <= len(trace.steps)
        assert_steps_tile(trace)
    assert line1.answer == "29" and line1.outcome == 1.0  # "# Answer" heading of the last step


def test_math_shepherd() -> None:
    report = imported("step_labels/math_shepherd_samples.jsonl")
    assert report.format == "math_shepherd" and not report.issues
    assert [t.first_error for t in report.traces] == [4, 0, 0, 0, 1, 0, 0]
    assert sum(len(t.steps) for t in report.traces) == 25
    for trace, record in zip(report.traces, raw_records("step_labels/math_shepherd_samples.jsonl"), strict=True):
        assert "ки" not in trace.cot and "Step 1:" not in trace.question
        assert [step.split(":")[0] for step in trace.steps] == [f"Step {k}" for k in range(1, len(trace.steps) + 1)]
        assert len(trace.step_labels) == len(trace.steps) and set(trace.step_labels) <= {-1, 1}
        assert trace.step_labels.count(-1) == record["label"].count(" -\n") + record["label"].endswith(" -")
        assert_steps_tile(trace)


def test_thought_anchors() -> None:
    relative = "traces/thought_anchors_r1distill_traces.jsonl"
    report = imported(relative)
    records = raw_records(relative)
    assert report.format == "thought_anchors" and not report.issues
    assert len(report.traces) == 40
    assert sum(len(t.steps) for t in report.traces) == 5814
    assert sum(bool(t.correct) for t in report.traces) == 20
    assert len({t.trace_id for t in report.traces}) == 40
    for trace, record in zip(report.traces, records, strict=True):
        chunks = record["chunks"]
        assert trace.prompt == record["prompt"] and trace.prompt.endswith("<think>\n")
        assert trace.cot == record["trace"] and trace.correct == record["is_correct"]
        assert set(trace.step_values) == {"mc_accuracy"}
        assert set(trace.step_scores) == {
            "ta_resampling_importance",
            "ta_counterfactual_importance",
            "ta_forced_importance",
        }
        assert all(len(values) == len(chunks) for values in (*trace.step_values.values(), *trace.step_scores.values()))
        assert list(trace.step_values["mc_accuracy"]) == [c["accuracy"] for c in chunks]
        assert all(0.0 <= v <= 1.0 for v in trace.step_values["mc_accuracy"] if not math.isnan(v))
        assert len(trace.metadata["function_tags"]) == len(chunks)
        # the steps are the chunks, up to the whitespace the upstream chunker normalised
        assert [" ".join(s.split()) for s in trace.steps] == [" ".join(c["chunk"].split()) for c in chunks]
        assert_steps_tile(trace)
        assert trace.step_spans()[-1][0] + len(trace.steps[-1]) <= trace.cot.index("</think>")
    assert sum(t.metadata["respaced_chunks"] for t in report.traces) == 116


def test_gsm8k_test_set() -> None:
    report = imported("gsm8k/test.jsonl")
    assert report.format == "gsm8k" and not report.issues and len(report.traces) == 1319
    for trace, record in zip(report.traces, raw_records("gsm8k/test.jsonl"), strict=True):
        assert trace.reference_answer == record["answer"].rsplit("#### ", 1)[1].strip()
        assert "<<" not in trace.reference_solution and "####" not in trace.reference_solution
        assert trace.outcome == 1.0 and trace.metadata == {"kind": "reference_solution"}
        assert trace.answer == trace.reference_answer
        assert_steps_tile(trace)


def test_gsm8k_model_solutions() -> None:
    report = imported("gsm8k/example_model_solutions.jsonl")
    assert report.format == "gsm8k_solutions" and not report.issues
    assert len(report.traces) == 5276
    assert sum(t.correct is False for t in report.traces) == 3275
    correct_by_model = Counter(t.metadata["model"] for t in report.traces if t.correct)
    assert correct_by_model == {
        "6b_finetuning": 286,
        "6b_verification": 515,
        "175b_finetuning": 458,
        "175b_verification": 742,
    }
    assert all("<<" not in t.reference_solution for t in report.traces)
    # line i has the same problem (and reference answer) as line i of test.jsonl
    test_set = imported("gsm8k/test.jsonl").traces
    assert [t.reference_answer for t in report.traces[::4]] == [t.reference_answer for t in test_set]


def test_math500() -> None:
    report = imported("math/math500_test.jsonl")
    assert report.format == "math" and not report.issues and len(report.traces) == 500
    assert Counter(t.metadata["level"] for t in report.traces) == {1: 43, 2: 90, 3: 105, 4: 128, 5: 134}
    records = raw_records("math/math500_test.jsonl")
    assert [t.trace_id for t in report.traces] == [r["unique_id"] for r in records]
    assert all(t.cot == t.reference_solution and t.correct for t in report.traces)


def test_competition_sets() -> None:
    aime = imported("competition/aime24_qwen25math.jsonl")
    assert aime.format == "math" and not aime.issues and len(aime.traces) == 30
    assert [t.trace_id for t in aime.traces] == [str(i) for i in range(60, 90)]
    amc = imported("competition/amc23.jsonl")  # problems without solutions: each one an issue, none lost
    assert amc.format == "math" and amc.records_read == 40 and not amc.traces
    assert amc.records_failed == 40 and all("solution" in issue.message for issue in amc.issues)


def test_qwen_rm() -> None:
    report = imported("traces/qwen_math_cot_100_rm_scored.jsonl")
    assert report.format == "qwen_rm" and not report.issues and len(report.traces) == 800
    assert sum(bool(t.correct) for t in report.traces) == 728
    groups: dict[int, list[Trace]] = {}
    for trace in report.traces:
        groups.setdefault(trace.metadata["group"], []).append(trace)
    assert len(groups) == 100 and all(len(g) == 8 for g in groups.values())
    all_correct = sum(all(t.correct for t in g) for g in groups.values())
    all_wrong = sum(not any(t.correct for t in g) for g in groups.values())
    assert (all_correct, all_wrong) == (86, 4)
    scores = [t.metadata["rm_score"] for t in report.traces]
    assert min(scores) == pytest.approx(-4.28, abs=0.01) and max(scores) == pytest.approx(6.09, abs=0.01)
    assert report.traces[9].trace_id == f"{report.traces[9].metadata['group']}/1"


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


# ---------------------------------------------------------------- inline records

QUESTION = "Tom has 2 apples and buys 3 more. How many apples does he have?"

SAMPLES: dict[str, dict[str, Any]] = {
    "processbench": {
        "id": "pb-1",
        "generator": "toy",
        "problem": QUESTION,
        "steps": ["He starts with 2 apples.", "2 + 3 = 6, so the answer is \\boxed{6}."],
        "final_answer_correct": False,
        "label": 1,
    },
    "gsm8k": {"question": QUESTION, "answer": "He has 2 apples.\nThen 2 + 3 = <<2+3=5>>5 apples.\n#### 5"},
    "gsm8k_solutions": {
        "question": QUESTION,
        "ground_truth": "He has 2 + 3 = <<2+3=5>>5 apples.\nA: 5",
        "6b_finetuning": {"is_correct": False, "solution": "He has 2 * 3 = <<2*3=6>>6 apples.\nA: 6"},
        "175b_verification": {"is_correct": True, "solution": "He has 2 + 3 = <<2+3=5>>5 apples.\nA: 5"},
    },
    "math": {
        "problem": "Compute $\\frac12 + \\frac14$.",
        "solution": "We get $\\frac{2}{4} + \\frac{1}{4} = \\boxed{\\frac{3}{4}}$.",
        "answer": "\\frac{3}{4}",
        "subject": "Prealgebra",
        "level": 1,
        "unique_id": "test/prealgebra/1.json",
    },
    "prm800k": {
        "labeler": "toy-labeler",
        "timestamp": "2022-01-01T00:00:00",
        "generation": 3,
        "is_quality_control_question": False,
        "is_initial_screening_question": False,
        "question": {
            "problem": QUESTION,
            "ground_truth_answer": "5",
            "ground_truth_solution": "2 + 3 = 5, so $\\boxed{5}$.",
            "pre_generated_steps": ["He has 2 apples.", "He buys 3, so 2 * 3 = 6.", "# Answer\n\n6"],
            "pre_generated_answer": "6",
        },
        "label": {
            "steps": [
                {"completions": [{"text": "He has 2 apples.", "rating": 0}], "chosen_completion": 0},
                {"completions": [{"text": "He buys 3, so 2 * 3 = 6.", "rating": -1}], "chosen_completion": None},
            ],
            "finish_reason": "found_error",
        },
    },
    "thought_anchors": {
        "model": "toy-model",
        "condition": "correct_base_solution",
        "problem_id": "problem_1",
        "problem": QUESTION,
        "prompt": f"Solve: {QUESTION} Solution: \n<think>\n",
        "trace": "He has 2 apples.\n\nThen 3 more makes 5. Done.\n</think>\n\nSo \\boxed{5}.",
        "answer": "5",
        "is_correct": True,
        "gt_answer": "5",
        "gt_solution": "2 + 3 = 5.",
        "chunks": [
            {
                "chunk": "He has 2 apples. Then 3 more makes 5.",  # the chunker joined a paragraph break
                "chunk_idx": 0,
                "function_tags": ["problem_setup"],
                "depends_on": [],
                "accuracy": 0.9,
                "resampling_importance_accuracy": 0.1,
                "counterfactual_importance_accuracy": 0.05,
                "forced_importance_accuracy": 0.2,
            },
            {
                "chunk": "Done.",
                "chunk_idx": 1,
                "function_tags": ["final_answer_emission"],
                "depends_on": ["0"],
                "accuracy": 1.0,
                "resampling_importance_accuracy": None,
                "counterfactual_importance_accuracy": 0.0,
                "forced_importance_accuracy": 0.0,
            },
        ],
    },
    "qwen_rm": {
        "idx": 7,
        "question": QUESTION,
        "gt": "5",
        "solution": "$2 + 3 = \\boxed{5}$",
        "level": "Level 1",
        "system": "Reason step by step.",
        "response": ["2 + 3 = 5, so \\boxed{5}.", "2 * 3 = 6, so \\boxed{6}."],
        "pred": ["5", "6"],
        "score": [True, False],
        "pred_score": [[1.5], [-0.75]],
    },
    "math_shepherd": {
        "input": f"{QUESTION} Step 1: He has 2 + 3 = 5 apples. ки\nStep 2: The answer is: 6 ки",
        "label": f"{QUESTION} Step 1: He has 2 + 3 = 5 apples. +\nStep 2: The answer is: 6 -",
        "task": "GSM8K",
    },
}


def claimants(record: dict[str, Any]) -> list[str]:
    """The specific (non-fallback) importers that claim a record: exactly one for every known format."""
    specific = [name for name in importers.names() if not importers.get(name).fallback]
    return [name for name in specific if importers.get(name).sniff(record)]


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


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


def test_prm800k_phase1_chosen_path() -> None:
    record = copy.deepcopy(SAMPLES["prm800k"])
    record["generation"] = None
    del record["question"]["pre_generated_steps"]
    record["label"] = {
        "steps": [
            {
                "completions": [{"text": "He has 2 apples.", "rating": 1}, {"text": "He has 3.", "rating": -1}],
                "human_completion": None,
                "chosen_completion": 0,
            },
            {
                "completions": [{"text": "2 * 3 = 6.", "rating": -1}],
                "human_completion": {"text": "2 + 3 = 5.", "rating": None, "source": "human"},
                "chosen_completion": None,
            },
            {"completions": [{"text": "# Answer\n\n5", "rating": 1}], "chosen_completion": 0},
            {"completions": None, "human_completion": None, "chosen_completion": None},
        ],
        "finish_reason": "solution",
    }
    (trace,) = importers.get("prm800k")().convert(record)
    assert trace.steps == ("He has 2 apples.", "2 + 3 = 5.", "# Answer\n\n5")
    assert (trace.step_labels, trace.first_error, trace.metadata["human_steps"]) == ((1, 1, 1), -1, [1])
    assert trace.answer == "5" and trace.outcome == 1.0
    record["label"]["finish_reason"] = "give_up"
    assert importers.get("prm800k")().convert(record)[0].first_error is None


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


def test_native_records_are_not_claimed() -> None:
    trace = Trace(
        question=QUESTION,
        cot="He has 2 apples. Then 2 + 3 = 5. The answer is 5.",
        reference_answer="5",
        reference_solution="2 + 3 = 5",
        steps=("He has 2 apples.", "Then 2 + 3 = 5.", "The answer is 5."),
        first_error=-1,
        step_labels=(1, 1, 1),
        step_values={"mc_accuracy": (0.5, 0.9, 1.0)},
        prompt="Q: ",
        metadata={"problem": "x", "answer": "5"},
    )
    for record in (trace.to_dict(), {"question": QUESTION, "cot": "2 + 3 = 5"}):
        assert claimants(record) == ["native"]
        assert detect_format(record) == "native"
