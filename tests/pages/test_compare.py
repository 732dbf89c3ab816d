"""The Compare page: methods x segments heatmap, agreement matrix, and Monte Carlo in the background."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import figure_titled, run_page

from rredcot_viz.ui import resources

pytestmark = pytest.mark.integration


def test_methods_heatmap_and_agreement():
    app = run_page("pages/compare.py")
    app.multiselect(key="compare_methods").set_value(["rredcot", "uniform", "loo", "shapley"]).run()
    assert not app.exception
    heatmap = figure_titled(app, "Methods × segments")
    z = np.array(heatmap["data"][0]["z"])
    raw = np.array(heatmap["data"][0]["customdata"])
    assert heatmap["data"][0]["y"] == ["rredcot", "uniform", "loo", "shapley"] and z.shape == raw.shape
    assert raw[1] == pytest.approx(np.full(raw.shape[1], raw[1][0]))  # uniform: R / K everywhere
    assert raw[0].sum() == pytest.approx(raw[1].sum())  # both redistribute the same outcome
    matrix = figure_titled(app, "spearman between methods")
    assert np.array(matrix["data"][0]["z"]).shape == (4, 4)
    app.radio(key="compare_metric").set_value("kendall").run()
    assert figure_titled(app, "kendall between methods")
    table = app.dataframe[-1].value
    assert list(table.columns[:2]) == ["segment", "text"] and {"loo", "shapley"} <= set(table.columns)


def test_monte_carlo_runs_in_the_background_and_joins():
    app = run_page("pages/compare.py")
    app.multiselect(key="compare_methods").set_value(["rredcot", "mc"]).run()
    rollouts = app.number_input(key="mc_rollouts")  # generated from MonteCarloConfig, started at cpu_quick
    assert (rollouts.value, app.number_input(key="mc_max_new_tokens").value) == (8, 160)
    assert rollouts.min == 1 and "continuations sampled from every state" in rollouts.help
    rollouts.set_value(2)
    app.number_input(key="mc_max_new_tokens").set_value(32).run()
    assert "joins the comparison once its rollouts" in app.info[-1].value
    app.button(key="mc_run").click().run()
    jobs = resources.jobs()
    job = jobs.jobs()[0]  # newest first
    jobs.wait(job, timeout=300)
    assert job.status == "done", job.error
    time.sleep(0.2)
    app.run()
    assert not app.exception
    heatmap = figure_titled(app, "Methods × segments")
    assert heatmap["data"][0]["y"] == ["rredcot", "mc"]
    curves = figure_titled(app, "Value curves (Monte Carlo")
    assert any(trace["name"] == "mc 95% CI" for trace in curves["data"])
    cost = app.dataframe[0].value.set_index("method")
    assert cost.loc["mc", "tokens generated"] == 0  # the page re-used the stored rollouts
