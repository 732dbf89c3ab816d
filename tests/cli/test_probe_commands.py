"""``probe fit`` then ``analyze --estimator probe`` on a tiny model saved as a folder, as a user runs them; a model
with no probe gets one line naming the fit command."""

from __future__ import annotations

import json

from rredcot_viz.cli import main
from rredcot_viz.paths import SAMPLE_TRACES_DIR
from rredcot_viz.store import Store

SOURCE = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")


def test_probe_fit_then_analyze_with_the_probe(tmp_path, capsys, monkeypatch, tiny_model_dir):
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "s.duckdb"))
    monkeypatch.setenv("RREDCOT_DATA_DIR", str(tmp_path / "data"))
    model = ["--model", str(tiny_model_dir)]
    assert main(["analyze", SOURCE, "--limit", "1", "--estimator", "probe", *model]) == 2
    err = capsys.readouterr().err
    assert "no value probe for model" in err and "python -m rredcot_viz probe fit" in err
    assert main(["probe", "fit", SOURCE, "--limit", "6", "--segmenter", "line", "--mc-rollouts", "2",
                 "--mc-max-tokens", "4", "--folds", "3", *model]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "wrote " in out and "analyze with --estimator probe" in out
    (path,) = (tmp_path / "data" / "probes").glob("*.json")
    probe = json.loads(path.read_text())
    assert probe["precision"] == "float32/none" and probe["training"]["traces"] >= 1
    assert {"cv_brier", "heldout_brier", "heldout_pairs"} <= set(probe["metrics"])
    assert len(probe["training"]["trace_hashes"]) == probe["training"]["traces"]
    store = Store(tmp_path / "s.duckdb")
    with store.cursor() as cur:  # the rollouts drawn for the labels are stored
        assert cur.execute("SELECT count(*) FROM rollouts").fetchone()[0] >= 2 * probe["training"]["states"]
    store.close()
    assert main(["analyze", SOURCE, "--limit", "2", "--estimator", "probe", "--segmenter", "line", *model]) == 0
    out = capsys.readouterr().out
    assert out.count("probe, exact_sum") == 2 and "value probe: layer" in out
    assert main(["probe", "eval", SOURCE, "--limit", "6", "--segmenter", "line", "--mc-rollouts", "2",
                 "--mc-max-tokens", "4", *model]) in (0, 1)  # fmt: skip
    assert "were fitted on and are left out" in capsys.readouterr().out
