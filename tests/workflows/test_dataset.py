"""Dataset runs' tables (workflows/dataset.py)."""

from __future__ import annotations

import pytest

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.dataset import DatasetRecord, analyze_dataset, records_frame


def test_labelled_first_error_reads_none_for_a_correct_trace_and_blank_without_a_label():
    records = [
        DatasetRecord("h1", "t1", "s", 1.0, first_error_label=-1),
        DatasetRecord("h2", "t2", "s", 0.0, first_error_label=2),
        DatasetRecord("h3", "t3", "s", 0.0),
    ]
    assert records_frame(records)["labelled first error"].tolist() == ["none", "3", ""]


def test_an_analysis_whose_every_trace_failed_fails(tiny):
    """A job of nothing but error rows is reported as failed, with what went wrong, not as done."""
    traces = [
        Trace("What is 2 + 2?", "2 + 2 = 4.\nThe answer is 4.", correct=True),
        Trace("What is 3 + 2?", "3 + 2 = 5.\nThe answer is 5."),  # no label, no reference
    ]
    line, rredcot = segmenters.get("line")(), estimators.get("rredcot")()
    with pytest.raises(RredcotError, match=r"^all 2 traces failed; the first: estimator 'rredcot' needs a reference"):
        analyze_dataset(Analyzer(tiny), traces, line, rredcot)
    records = analyze_dataset(Analyzer(tiny), traces, line, estimators.get("own_answer")())
    assert [r.error is None for r in records] == [True, True] and sum(records[0].sigma) == pytest.approx(1.0)


def test_a_run_s_csv_export_carries_the_text_model_settings_step_and_reward(tmp_path):
    """The download had a short hash, source, outcome, K, tokens and sum sigma, and nothing to read it by."""
    import json

    from rredcot_viz.store import Store
    from rredcot_viz.traces.importers.rollouts import ROLLOUT_KEY, rollout_metadata
    from rredcot_viz.workflows.dataset import export_frame, save_run

    store = Store(tmp_path / "s.duckdb")
    rollout = Trace("What is 2 + 2?", "2 + 2 = 4.\nThe answer is 4.", correct=True,
                    metadata=rollout_metadata(7, "p", 1.0, {"score": 1.0}, None, "score"))  # fmt: skip
    plain = Trace("What is 3 + 2?", "3 + 2 = 5.\nThe answer is 5.", correct=True)
    store.put_traces([rollout, plain], "mixed")
    records = [DatasetRecord(t.content_hash, None, t.source, 1.0, k=2, sigma=[0.25, 0.75], values=[0.5, 0.75, 1.0])
               for t in (rollout, plain)]  # fmt: skip
    model = {"name": "toy", "fingerprint": "f0", "quantization": "4bit-nf4", "dtype": "float32"}
    run_id = save_run(store, model, segmenters.get("line")(), estimators.get("own_answer")(), records, "x")
    frame = export_frame(store, run_id)
    assert frame["question"].tolist() == ["What is 2 + 2?", "What is 3 + 2?"]
    assert frame["response"][0] == rollout.cot and rollout.metadata[ROLLOUT_KEY]["step"] == 7
    assert frame["step"].tolist()[0] == 7 and frame["reward"].tolist()[0] == 1.0 and frame["step"].isna()[1]
    assert set(frame["model"]) == {"toy"} and set(frame["quantization"]) == {"4bit-nf4"}
    assert set(frame["segmenter"]) == {"line"} and set(frame["estimator"]) == {"own_answer"}
    assert json.loads(frame["sigma"][0]) == [0.25, 0.75] and frame["sum sigma"][0] == 1.0
