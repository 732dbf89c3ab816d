"""The Dataset page: analyse several traces in the background, then the aggregate views and the table."""

from __future__ import annotations

import pytest
from conftest import figure_titled, run_page
from streamlit.testing.v1 import AppTest

from rredcot_viz.app import screen_path
from rredcot_viz.ui import resources

pytestmark = pytest.mark.integration


def test_background_run_aggregates_and_opens_inspect():
    app = run_page(screen_path("dataset"))
    app.selectbox(key="dataset_collection").select("samples").run()
    app.slider(key="dataset_count").set_value(3)
    app.selectbox(key="dataset_segmenter").select("line")
    app.selectbox(key="dataset_estimator").select("answer_only").run()
    app.multiselect(key="dataset_agree").set_value(["uniform"]).run()
    app.button(key="dataset_run").click().run()
    job = resources.jobs().get(app.session_state["dataset_job"])
    resources.jobs().wait(job, timeout=300)
    assert job.status == "done", job.error
    app.run()
    assert not app.exception
    table = app.dataframe[-1].value
    assert len(table) == 3 and set(table["outcome"]) <= {0.0, 1.0}
    assert table["sum sigma"].tolist() == pytest.approx(table["outcome"].tolist(), abs=1e-6)
    profile = figure_titled(app, "mean σ by relative position, correct traces")
    assert all(0 <= x <= 1 for x in profile["data"][0]["x"])


def test_import_a_shared_file(shared_data):
    path = shared_data / "processbench" / "gsm8k.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    app = run_page(screen_path("dataset"))
    app.selectbox(key="dataset_shared").select(path).run()
    app.number_input(key="dataset_import_limit").set_value(5)
    app.button(key="dataset_import").click().run()
    assert "gsm8k.json: 5 traces imported as format processbench" in app.success[0].value
    assert "dataset:gsm8k.json (5 traces)" in app.selectbox(key="dataset_collection").options
    app.selectbox(key="dataset_collection").select("dataset:gsm8k.json").run()
    app.selectbox(key="dataset_estimator").select("rredcot").run()
    warning = app.warning[0].value
    assert "rredcot: runs on 0 of 5 records; 5 lack a reference answer" in warning
    assert app.button(key="dataset_run").disabled  # nothing to analyse: no model work is started
    app.selectbox(key="dataset_estimator").select("own_answer").run()
    assert not app.warning and "own_answer: runs on 5 of 5 records" in " ".join(c.value for c in app.caption)


def _open_a_run_trace_in_inspect():
    """A script that presses 'Open in Inspect' for a run that used the line segmenter and answer_only."""
    import streamlit as st

    from rredcot_viz.ui import dataset_views

    st.switch_page = lambda page: st.session_state.update(switched_to=page)
    settings = {"segmenter": "line", "segmenter_config": {}, "estimator": "answer_only", "estimator_config": {}}
    dataset_views.open_in_inspect("abc123", "samples", settings)


def test_open_in_inspect_uses_the_run_estimator_not_the_recorded_scores():
    app = AppTest.from_function(_open_a_run_trace_in_inspect, default_timeout=60).run()
    assert not app.exception, [e.value for e in app.exception]
    state = app.session_state
    assert (state["trace_hash"], state["trace_source"], state["collection"]) == ("abc123", "Stored", "samples")
    assert (state["inspect_source"], state["inspect_segmenter"], state["inspect_estimator"]) == (
        "live",
        "line",
        "answer_only",
    )
    assert state["switched_to"] == screen_path("inspect")
