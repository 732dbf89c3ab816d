"""bench/store_writes.py on a small file: the import stores every row in its collection, the second import
of the same file adds memberships only, and the last line has the figures the bench table quotes."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench scripts import their neighbours
store_writes = importlib.import_module("store_writes")


def test_store_writes_smoke_stores_every_row_and_prints_the_figures(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["store_writes.py", "--rows", "300", "--control-rows", "50"])
    store_writes.main()
    out = capsys.readouterr().out
    assert "300 traces in collection bench: 300 new, 0 already stored" in out
    assert "300 traces in collection bench-2: 0 new, 300 already stored (300 added to this collection" in out
    last = out.strip().splitlines()[-1]
    figures = dict(pair.split("=") for pair in last.split())
    assert list(figures) == ["rows", "seconds", "peak_mb", "concurrent_reader_waited_s"] and figures["rows"] == "300"
    assert re.fullmatch(r"[\d.]+", figures["seconds"]) and 0 < float(figures["peak_mb"]) < 1024
