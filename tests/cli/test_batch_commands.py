"""The batch command (cli/batch_commands.py): ``analyze-dataset`` refuses an output folder it cannot write."""

from __future__ import annotations

from rredcot_viz.cli import main
from rredcot_viz.paths import SAMPLE_TRACES_DIR


def test_an_out_folder_where_nothing_can_be_created_is_one_message(tmp_path, capsys, monkeypatch):
    """/proc and /sys pass the permission checks as root, then creating the part files raised a traceback."""
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "s.duckdb"))
    source = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    for out, folder in [("/proc/out", "/proc"), ("/sys/out", "/sys")]:
        assert main(["analyze-dataset", source, "--estimator", "uniform", "--out", out]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith(f"error: output folder {out}: no file can be created in {folder} (")
        assert "Traceback" not in captured.err and len(captured.err.splitlines()) == 1
