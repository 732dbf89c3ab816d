"""TRL GRPO completion logs: a folder of completions_NNNNN.parquet is one run, one trace per completion, the
rewards mapped to the outcome and TRL's advantage kept; bad rows are reported with file and row."""

from __future__ import annotations

import pandas as pd
import pytest
from rl_logs import PROBLEMS, SYSTEM, trl_run

from rredcot_viz.cli import main
from rredcot_viz.traces.importers import detect_format, import_file, importers
from rredcot_viz.traces.importers.rollouts import prompt_key


def test_a_trl_output_dir_is_one_run_of_completions(tmp_path):
    report = import_file(trl_run(tmp_path / "grpo-out"))
    assert report.format == "trl_completions" and not report.issues
    assert len(report.traces) == 2 * 2 * 3  # steps x prompts x generations
    first = report.traces[0]
    assert (first.question, first.metadata["system"], first.prompt) == (PROBLEMS[0][0], SYSTEM, None)
    assert first.cot.endswith("The answer is 5.") and first.reference_answer == "5"  # TRL's `solution` column
    rollout = first.metadata["rollout"]
    assert rollout["step"] == 1 and rollout["outcome_from"] == "accuracy_reward"
    assert rollout["rewards"] == {"accuracy_reward": 1.0, "format_reward": 1.0}
    assert rollout["reward"] == 2.0 and rollout["advantage"] == pytest.approx(2 / 3 / (0.57735 + 1e-4), rel=1e-4)
    wrong = report.traces[1].metadata["rollout"]
    assert wrong["rewards"] == {"accuracy_reward": 0.0, "format_reward": None}  # NaN: the function returned None
    assert wrong["reward"] == 0.0 and report.traces[1].outcome == 0.0
    assert [t.metadata["rollout"]["step"] for t in report.traces] == [1] * 6 + [2] * 6
    assert {t.metadata["rollout"]["prompt"] for t in report.traces} == {
        prompt_key([{"role": "system", "content": SYSTEM}, {"role": "user", "content": q}]) for q, _ in PROBLEMS
    }


def test_the_completions_folder_itself_and_text_prompts(tmp_path):
    run = trl_run(tmp_path / "out", steps=(3, 12, 7), chat=False)
    report = import_file(run / "completions")
    assert [t.metadata["rollout"]["step"] for t in report.traces][::6] == [3, 7, 12]  # step order, not name order
    first = report.traces[0]
    assert first.question == first.prompt == PROBLEMS[0][0]  # TRL applies no chat template to a text prompt
    single = import_file(run / "completions" / "completions_00007.parquet")
    assert len(single.traces) == 6 and single.format == "trl_completions"


@pytest.mark.parametrize(
    ("rewards", "expected", "source"),
    [
        ({"accuracy_reward": 1.0, "format_reward": 0.5}, True, "accuracy_reward"),
        ({"length_penalty": 0.0}, False, "length_penalty"),  # the only reward, 0/1
        ({"a": 0.5, "b": 0.5}, True, "total"),  # the total is 1
        ({"a": 0.25, "b": 0.5}, None, None),  # another scale: answer checking decides
    ],
)
def test_rewards_become_the_outcome(rewards, expected, source):
    record = {"step": 1, "prompt": "What is 2 + 3?", "completion": "It is 5.", **rewards, "advantage": 0.1}
    assert detect_format(record) == "trl_completions"
    (trace,) = importers.get("trl_completions")().convert(record)
    assert trace.correct is expected and trace.metadata["rollout"]["outcome_from"] == source
    assert trace.metadata["rollout"]["reward"] == pytest.approx(sum(rewards.values()))


def test_a_mapped_outcome_column_and_extras(tmp_path):
    frame = pd.DataFrame(
        {
            "step": [4],
            "prompt": ["What is 2 + 3?"],
            "completion": ["2 + 3 = 5"],
            "judge_score": [1.0],
            "judge_note": ["fine"],
            "advantage": [0.0],
        }
    )
    path = tmp_path / "completions_00004.parquet"
    frame.to_parquet(path)
    (trace,) = import_file(path, field_map={"judge_score": "correct"}).traces
    assert trace.correct is True and trace.metadata["rollout"]["outcome_from"] == "correct"
    assert trace.metadata["extra"] == {"judge_note": "fine"}


def test_bad_rows_name_file_and_row_and_nothing_else_is_lost(tmp_path, capsys):
    run = trl_run(tmp_path / "out", steps=(1,))
    path = run / "completions" / "completions_00001.parquet"
    frame = pd.read_parquet(path)
    frame.loc[2, "completion"] = [{"role": "assistant", "content": "   "}]
    frame["step"] = frame["step"].astype(float)
    frame.loc[4, "step"] = 1.5
    frame.to_parquet(path)
    report = import_file(run)
    assert len(report.traces) == 4 and report.records_failed == 2
    assert [str(i) for i in report.issues] == [
        "completions_00001.parquet:row 2: trl_completions: a trace needs a non-empty chain-of-thought text (cot)",
        "completions_00001.parquet:row 4: trl_completions: `step` must be a whole number, got 1.5",
    ]
    assert main(["import", str(run)]) == 0
    assert "problem: completions_00001.parquet:row 2" in capsys.readouterr().out
