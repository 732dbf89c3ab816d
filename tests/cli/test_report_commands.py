"""``report`` (cli/report_commands.py): an RL run's report without a model, a trace's with the embedded model,
and a name that is nothing a clear message with exit code 2; ``import --collection`` stores a run."""

from __future__ import annotations

import re

import pytest
from rl_logs import trl_run

from rredcot_viz.cli import main
from rredcot_viz.store import Store


def test_import_a_run_then_report_it(tmp_path, capsys, monkeypatch):
    store_path = tmp_path / "store.duckdb"
    monkeypatch.setenv("RREDCOT_STORE", str(store_path))
    assert main(["import", str(trl_run(tmp_path / "grpo-out")), "--collection"]) == 0
    out = capsys.readouterr().out
    run_id = re.search(r"stored run (\S+): 12 rollouts, 2 steps, 2 prompts", out).group(1)
    assert "4 traces in collection run:grpo-out: 4 new, 0 already stored; 8 repeated a trace above" in out
    assert main(["report", run_id, "--out", str(tmp_path / "run.html"), "--step", "1"]) == 0
    html = (tmp_path / "run.html").read_text()
    assert f"RL run · {run_id}" in html and re.findall(r'data-step="(\d+)"', html) == ["1", "1"]
    assert "credit from</dt><dd>none (no analysis of this run" in html
    assert main(["report", run_id, "--out", str(tmp_path / "x.html"), "--step", "9"]) == 2
    assert "has no group at step 9" in capsys.readouterr().err
    assert main(["report", "no-such-thing", "--out", str(tmp_path / "x.html")]) == 2
    assert "'no-such-thing' is not a run with stored rollouts" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()
    Store(store_path).close()


@pytest.mark.integration
def test_a_trace_report_with_the_embedded_model(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "store.duckdb"))
    out = tmp_path / "trace.html"
    argv = ["report", "sample-bakery-correct", "--out", str(out), "--segmenter", "line", "--estimator", "answer_only"]
    assert main([*argv, "--shade", "R_hat"]) == 0
    html = out.read_text()
    assert "Inspect · sample-bakery-correct" in html and "shaded by R_hat" in html
    assert "model</dt><dd>SmolLM2-135M-Instruct" in html and html.count("Plotly.newPlot") == 2


def test_a_superscript_index_and_an_out_where_no_file_can_be_created_are_one_message(tmp_path, capsys, monkeypatch):
    """``"²".isdigit()`` is true and ``int("²")`` a ValueError; ``--out /proc/r.html`` a FileNotFoundError."""
    import json

    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "store.duckdb"))
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"question": "What is 2 + 3?", "cot": "2 + 3 = 5.", "reference_answer": "5"}) + "\n")
    out = str(tmp_path / "r.html")
    assert main(["report", str(data), "--trace", "²", "--model", "no-such-model", "--out", out]) == 2
    assert capsys.readouterr().err == f"error: no trace '²' in {data}: give a trace id or an index below 1\n"
    assert main(["import", str(trl_run(tmp_path / "grpo-out")), "--collection"]) == 0
    run_id = re.search(r"stored run (\S+):", capsys.readouterr().out).group(1)
    assert main(["report", run_id, "--out", "/proc/r.html"]) == 2
    assert capsys.readouterr().err.startswith("error: output file /proc/r.html: no file can be created in /proc (")
