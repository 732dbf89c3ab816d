"""The engine end to end on the embedded model and the sample traces."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.cli import main
from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.paths import SAMPLE_TRACES_DIR
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.io import sample_traces

pytestmark = pytest.mark.integration


def test_sample_pair_on_the_embedded_model(embedded_lm):
    traces = {t.trace_id: t for t in sample_traces()}
    analyzer = Analyzer(embedded_lm)
    for trace_id, outcome in (("sample-train-correct", 1.0), ("sample-train-failed", 0.0)):
        result = analyzer.analyze(traces[trace_id], segmenters.get("hybrid")(k=4), estimators.get("rredcot")())
        assert result.outcome == outcome and abs(result.sigma.sum() - outcome) < 1e-9
        r_hat = result.values.components["R_hat"]
        assert np.isfinite(result.values.values).all() and ((r_hat > 0) & (r_hat < 1)).all()
    # the correct trace's last reasoning segment states the right intermediate result: R-hat rises at its end
    correct = analyzer.analyze(
        traces["sample-train-correct"], segmenters.get("line")(), estimators.get("answer_only")()
    )
    assert correct.model_calls == 0
    r_hat = correct.values.components["R_hat"]
    assert r_hat[-1] > r_hat[0]


def test_cli_analyze_prints_the_segment_table(capsys, tmp_path):
    out = tmp_path / "result.jsonl"
    code = main(
        [
            "analyze",
            str(SAMPLE_TRACES_DIR / "arithmetic.jsonl"),
            "--trace",
            "sample-bakery-correct",
            "--segmenter",
            "hybrid",
            "--k",
            "3",
            "--estimator",
            "rredcot",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "hybrid K=3, rredcot, exact_sum" in text and "sum(sigma)=+1.0000" in text
    assert "segment  text" in text and "R_hat" in text and "sigma" in text
    import json

    record = json.loads(out.read_text())
    assert record["k"] == 3 and abs(sum(record["sigma"]) - 1.0) < 1e-9 and len(record["values"]) == 4
