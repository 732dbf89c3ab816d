"""The Learn page: its numbers are the teaching module's, for the settings on the sliders."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import figure_titled, run_page

from rredcot_viz.app import screen_path
from rredcot_viz.workflows.learn import ChainMDP, Trajectory, optimal_redistribution

pytestmark = pytest.mark.integration


def test_credit_follows_the_sliders():
    app = run_page(screen_path("learn"))
    app.slider(key="learn_k").set_value(3).run()
    for t, p in enumerate((0.9, 0.5, 0.8)):
        app.slider(key=f"learn_p{t}").set_value(p)
    app.slider(key="learn_recover").set_value(0.1)
    app.selectbox(key="learn_error").select(2).run()
    assert not app.exception
    credit = figure_titled(app, "Credit per step")
    optimal = next(trace for trace in credit["data"] if trace["name"] == "optimal σ*")
    expected = optimal_redistribution(ChainMDP((0.9, 0.5, 0.8), 0.1), Trajectory(3, 1, 0.0))
    np.testing.assert_allclose(optimal["y"], expected, atol=1e-9)
    errors = app.dataframe[0].value.set_index("method")
    assert errors.loc["GRPO (uniform)", "model samples needed"] == 0
    assert "not available" in app.dataframe[2].value.to_string()  # missing paper cells are not zeros


def test_the_default_settings_agree_with_the_text():
    app = run_page(screen_path("learn"))
    errors = app.dataframe[0].value.set_index("method")["mean |error| vs optimal"]
    assert errors["RREDCoT-style"] < errors["GRPO (uniform)"]  # the text's claim holds at the defaults
    captions = " ".join(c.value for c in app.caption)
    assert "v̂ alone never exceeds the true V here" in captions
    assert f"below GRPO's {errors['GRPO (uniform)']:.4f}" in captions
