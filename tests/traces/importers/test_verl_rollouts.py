"""verl rollout dumps: a folder of <step>.jsonl is one run; the question is recovered from the decoded chat
template, gts is the reference, acc (else a 0/1 score) the outcome; bad lines name file and line."""

from __future__ import annotations

import json

from rl_logs import PROBLEMS, SYSTEM, verl_run

from rredcot_viz.traces.importers import detect_format, import_file, importers


def test_a_rollout_dir_is_one_run(tmp_path):
    report = import_file(verl_run(tmp_path / "rollouts", steps=(1, 10, 2)))
    assert report.format == "verl_rollouts" and not report.issues
    assert [t.metadata["rollout"]["step"] for t in report.traces][::4] == [1, 2, 10]
    first, second = report.traces[:2]
    assert first.question == PROBLEMS[0][0] and first.reference_answer == "5"
    assert first.metadata["input"] == f"system\n{SYSTEM}\nuser\n{PROBLEMS[0][0]}\nassistant\n"
    assert (first.correct, second.correct, second.outcome) == (True, False, 0.0)
    rollout = second.metadata["rollout"]
    assert rollout["outcome_from"] == "acc" and rollout["reward"] == 0.0 and rollout["advantage"] is None
    assert first.metadata["rollout"]["prompt"] == second.metadata["rollout"]["prompt"]


def test_score_without_acc_and_structured_ground_truths():
    record = {"input": "Add 2 and 3.", "output": "5", "score": 1.0, "step": 3, "pred": "5", "reward": 1.0}
    assert detect_format(record) == "verl_rollouts"
    (trace,) = importers.get("verl_rollouts")().convert(record)
    assert trace.question == "Add 2 and 3." and trace.correct is True
    assert trace.metadata["rollout"]["outcome_from"] == "score"
    assert trace.metadata["rollout"]["rewards"] == {"score": 1.0, "reward": 1.0}
    code = {**record, "score": 0.4, "gts": {"tests": ["assert f() == 5"]}}
    (trace,) = importers.get("verl_rollouts")().convert(code)
    assert trace.correct is None and trace.reference_answer is None  # a 0.4 score is no outcome
    assert trace.metadata["extra"]["gts"] == {"tests": ["assert f() == 5"]}


def test_bad_lines_are_reported_with_file_and_line(tmp_path):
    root = verl_run(tmp_path / "rollouts", steps=(5,))
    lines = (root / "5.jsonl").read_text().splitlines()
    lines[1] = lines[1][: lines[1].index('"acc"')]  # a line cut short (a full disk, a killed writer)
    lines[2] = json.dumps({**json.loads(lines[2]), "step": "five"})
    (root / "5.jsonl").write_text("\n".join(lines) + "\n")
    report = import_file(root)
    assert len(report.traces) == 2
    first, second = (str(i) for i in report.issues)
    assert first.startswith("5.jsonl:line 2: invalid JSON at column ")
    assert second == "5.jsonl:line 3: verl_rollouts: `step` must be a whole number, got 'five'"
