"""The Diagnose page: verdicts on a failed sample, reset resampling as a tree, the stored evaluation view."""

from __future__ import annotations

import pytest
from conftest import figure_titled, run_page

from rredcot_viz.diagnosis.processbench import score
from rredcot_viz.ui import resources

pytestmark = pytest.mark.integration


def test_verdicts_reset_tree_and_evaluation_view():
    store = resources.store()
    store.put_run("diagnosis-test", "diagnosis", {"name": "m"}, {"split": "toy"}, None)
    rows = [score("min_sigma", [0, -1], [0, 1]).row()]
    store.put_result(
        "diagnosis-test:min_sigma",
        "",
        "diagnosis",
        "min_sigma",
        {},
        {"predictions": [0, -1], "labels": [0, 1], "n_steps": [3, 3]},
        {},
    )
    store.finish_run("diagnosis-test", "done", {"split": "toy", "table": rows}, {})

    app = run_page("pages/diagnose.py")
    assert app.title[0].value == "Diagnose"
    options = app.sidebar.selectbox(key="trace_Samples").options
    assert options and all(o.endswith("· failed") for o in options)
    verdicts = app.dataframe[0].value
    assert list(verdicts["detector"]) == ["min_sigma", "value_drop", "loo", "label"]
    assert app.get("html")[0].proto.body.count("data-segment=") >= 2
    app.slider(key="diagnose_g").set_value(2)
    app.select_slider(key="diagnose_tokens").set_value(64)
    app.button(key="diagnose_resample").click().run()
    assert not app.exception
    tree = figure_titled(app, "Reset resampling")
    assert len(tree["data"]) == 3  # the original trace and two suffixes
    assert "suffixes reach the reference answer" in " ".join(c.value for c in app.main.caption)
    confusion = figure_titled(app, "min_sigma: predicted vs labelled")
    assert confusion["data"][0]["z"][1][1] == 1  # labelled step 1, predicted step 1
    assert app.dataframe[-1].value["detector"].tolist() == ["min_sigma"]
