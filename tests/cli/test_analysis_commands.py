"""The analysis commands (cli/analysis_commands.py): ``analyze`` checks its inputs before the model; ``compare``
prints the table, the matrix and the costs."""

from __future__ import annotations

import json

import pytest

from rredcot_viz.cli import main
from rredcot_viz.paths import SAMPLE_TRACES_DIR


def test_analyze_checks_what_the_estimator_needs_before_the_model(tmp_path, capsys):
    records = [
        {
            "id": "a",
            "problem": "1+1?",
            "steps": ["1+1=2.", "So \\boxed{2}."],
            "final_answer_correct": True,
            "label": -1,
        },
        {
            "id": "b",
            "problem": "2+2?",
            "steps": ["2+2=5.", "So \\boxed{5}."],
            "final_answer_correct": False,
            "label": 0,
        },
    ]
    data = tmp_path / "no_references.json"
    data.write_text(json.dumps(records))
    argv = ["analyze", str(data), "--estimator", "rredcot", "--model", "no-such-model"]
    assert main(argv) == 2  # nothing can run: it says so without loading the (unknown) model
    captured = capsys.readouterr()
    assert "capability check: rredcot: runs on 0 of 2 records; 2 lack a reference answer" in captured.out
    assert "--estimator own_answer or uniform can run on them" in captured.out
    assert "cannot run on any of the 2 traces" in captured.err
    assert main([*argv, "--strict"]) == 2
    assert "--strict: not every method can run on every record" in capsys.readouterr().err


GOOD = {"question": "What is 2 + 3?", "cot": "2 + 3 = 5. The answer is 5.", "reference_answer": "5"}


def test_an_ambiguous_trace_id_is_refused_with_the_candidates(tmp_path, capsys):
    data = tmp_path / "ids.jsonl"
    records = [{**GOOD, "trace_id": "dup"}, {**GOOD, "trace_id": "solo"}, {**GOOD, "cot": "5.", "trace_id": "dup"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    argv = ["analyze", str(data), "--estimator", "uniform", "--model", "no-such-model"]
    assert main([*argv, "--trace", "dup"]) == 2  # refused before the (unknown) model is looked for
    captured = capsys.readouterr()
    assert "warning: 1 trace ids name more than one trace: 'dup' (2 traces)" in captured.out
    assert "trace id 'dup' names 2 different traces in" in captured.err
    assert "index 0 (short hash " in captured.err and "index 2 (short hash " in captured.err
    assert main([*argv, "--trace", "solo"]) == 2 and "no-such-model" in capsys.readouterr().err  # got to the model


def test_a_superscript_index_is_no_index(tmp_path, capsys):
    """``"²".isdigit()`` is true and ``int("²")`` a ValueError: ``--trace ²`` was a traceback."""
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps(GOOD) + "\n")
    assert main(["analyze", str(data), "--trace", "²", "--model", "no-such-model"]) == 2
    assert capsys.readouterr().err == f"error: no trace '²' in {data}: give a trace id or an index below 1\n"


def test_output_paths_are_checked_before_any_work(tmp_path, capsys):
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps(GOOD) + "\n")
    for command in (["analyze", str(data), "--model", "no-such-model"], ["import", str(data)]):
        assert main([*command, "--out", str(tmp_path / "missing" / "out.jsonl")]) == 2
        err = capsys.readouterr().err
        assert "the folder of output file" in err and "does not exist" in err and "Traceback" not in err
        assert main([*command, "--out", str(tmp_path)]) == 2
        assert "is a folder; give a file name inside it" in capsys.readouterr().err
    assert main(["--store", str(tmp_path / "s.duckdb"), "export", "runs", str(tmp_path / "no" / "runs.csv")]) == 2
    assert "the folder of export file" in capsys.readouterr().err


@pytest.mark.integration
def test_compare_cli_prints_table_matrix_and_costs(capsys):
    code = main(
        [
            "compare",
            str(SAMPLE_TRACES_DIR / "arithmetic.jsonl"),
            "--trace",
            "sample-bakery-correct",
            "--k",
            "3",
            "--methods",
            "rredcot,mc,loo,shapley",
            "--mc-rollouts",
            "2",
            "--mc-max-tokens",
            "16",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "segment  text" in out and "spearman between methods" in out
    import re

    gap = re.search(r"efficiency_gap=(\S+);", out)
    assert gap and abs(float(gap.group(1))) < 1e-9 and "exact over 8 subsets" in out
    cost_lines = [line for line in out.splitlines() if line.startswith("  mc ")]
    assert len(cost_lines) == 1 and "generated" in cost_lines[0]
