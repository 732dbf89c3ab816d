"""No module of the library or the benches grows past 400 lines (issue 43 item 8): a longer one is split along
its seams (bench/compare.py became bench/comparison/, workflows/runs.py gave rollout_groups its value types)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parents[1]
LIMIT = 400


def test_no_module_is_over_400_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for folder in ("rredcot_viz", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert not long, f"modules over {LIMIT} lines (split them along their seams): {long}"
