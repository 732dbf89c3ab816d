"""The batch command (cli/batch_commands.py): ``analyze-dataset`` refuses an output folder it cannot write."""

from __future__ import annotations

import json

from rredcot_viz.cli import main
from rredcot_viz.paths import SAMPLE_TRACES_DIR
from rredcot_viz.store import Store


def test_an_out_folder_where_nothing_can_be_created_is_one_message(tmp_path, capsys, monkeypatch):
    """/proc and /sys pass the permission checks as root, then creating the part files raised a traceback."""
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "s.duckdb"))
    source = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    for out, folder in [("/proc/out", "/proc"), ("/sys/out", "/sys")]:
        assert main(["analyze-dataset", source, "--estimator", "uniform", "--out", out]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith(f"error: output folder {out}: no file can be created in {folder} (")
        assert "Traceback" not in captured.err and len(captured.err.splitlines()) == 1


def analyze(tmp_path, model_dir, *extra: str, source: str | None = None) -> int:
    source = source or str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    return main(["analyze-dataset", source, "--limit", "3", "--estimator", "uniform", "--model", str(model_dir),
                 "--out", str(tmp_path / "out"), *extra])  # fmt: skip


def test_a_rerun_of_a_finished_analysis_reuses_its_run(tmp_path, capsys, monkeypatch, tiny_model_dir):
    """A rerun stored a second, identical dataset run; now the run is named by what it computes."""
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "s.duckdb"))
    assert analyze(tmp_path, tiny_model_dir) == 0
    first = capsys.readouterr().out
    run_id = first.split("stored as dataset run ")[1].split()[0]
    assert analyze(tmp_path, tiny_model_dir) == 0
    again = capsys.readouterr().out
    assert f"this analysis is already stored as dataset run {run_id} (3 traces" in again
    assert "stored as dataset run" not in again.replace("already stored as dataset run", "")
    assert analyze(tmp_path, tiny_model_dir, "--label", "second look") == 0  # another name is another run
    runs = Store(tmp_path / "s.duckdb").dataset_runs()
    assert len(runs) == 2 and set(runs["status"]) == {"done"} and run_id in set(runs["run_id"])


def test_the_same_analysis_running_elsewhere_is_refused(tmp_path, capsys, monkeypatch, tiny_model_dir):
    """Two concurrent runs of one analysis both did all the work; the second now stops before any."""
    store_path = tmp_path / "s.duckdb"
    monkeypatch.setenv("RREDCOT_STORE", str(store_path))
    assert analyze(tmp_path, tiny_model_dir) == 0
    run_id = capsys.readouterr().out.split("stored as dataset run ")[1].split()[0]
    store = Store(store_path)
    store.finish_run(run_id, "running", {}, {})  # as while its process (alive: this one) computes it
    store.close()
    assert analyze(tmp_path, tiny_model_dir) == 2
    err = capsys.readouterr().err
    assert f"another process is computing this same analysis now (dataset run {run_id})" in err


def test_an_analysis_no_trace_can_use_says_so_and_stores_nothing(tmp_path, capsys, monkeypatch, tiny_model_dir):
    """'merged 12 traces' and rc 0 when every row held an error."""
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "s.duckdb"))
    plain = tmp_path / "plain.jsonl"
    rows = [{"question": f"What is {i} + 1?", "cot": f"{i} + 1 = {i + 1}.\nThe answer is {i + 1}."} for i in range(3)]
    plain.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code = analyze(tmp_path, tiny_model_dir, "--estimator", "rredcot", source=str(plain))
    out = capsys.readouterr()
    assert code == 2
    message = out.err.splitlines()[-1]  # (the lines before: the fixture saving the tiny model)
    assert message.startswith("error: estimator 'rredcot' cannot run on any of the 3 traces: 3 lack ")
    assert message.endswith("own_answer can run on them") and "merged" not in out.out
    assert Store(tmp_path / "s.duckdb").dataset_runs().empty
