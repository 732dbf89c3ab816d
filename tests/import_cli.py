"""Running the ``import`` command in a test: its exit code and output, with no traceback allowed anywhere."""

from __future__ import annotations

from rredcot_viz.cli import main


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["import", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.out, captured.err
