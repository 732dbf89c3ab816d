"""bench/probe.py's main path on a small slice of the compare bench's traces, with a tiny model: the problems are
split before fitting, nothing held out is fitted on, and the last line carries the pre-registered keys."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench scripts import their neighbours
bench = importlib.import_module("probe")

KEYS = ["model", "fit_problems", "heldout_problems", "heldout_states", "probe_pairs", "probe_over_ceiling",
        "rredcot_pairs", "mc2_pairs_at_equal_cost", "probe_brier", "extra_tokens_per_trace"]  # fmt: skip


def test_the_bench_splits_before_fitting_and_ends_with_its_key_line(tiny, tmp_path, capsys):
    out = tmp_path / "probe.json"
    headline = bench.main(["--limit", "12", "--out", str(out), "--folds", "3"], lm=tiny)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert [pair.split("=")[0] for pair in last.split()][: len(KEYS)] == KEYS
    assert headline["extra_tokens_per_trace"] == "0"
    saved = json.loads(out.read_text())
    held = {p for p, s in saved["split"].items() if s == "heldout"}
    assert held and int(headline["heldout_problems"]) == len(held)
    assert int(headline["fit_problems"]) + len(held) == len(saved["split"])
    assert saved["fitted_on_problems"] and not held & set(saved["fitted_on_problems"])
    records = json.loads(bench.LABELS.read_text())["traces"][:12]
    held_traces = {r["trace"] for r in records if str(r["problem"]) in held}
    assert set(saved["probe_values"]) == held_traces  # values only for held-out traces
