"""The Compare page: methods x segments heatmap, agreement matrix, and Monte Carlo in the background."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import figure_titled, plotly_figures, run_page

from rredcot_viz.app import screen_path
from rredcot_viz.ui import resources

pytestmark = pytest.mark.integration


def test_methods_heatmap_and_agreement():
    app = run_page(screen_path("compare"))
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


def test_before_monte_carlo_the_page_says_why_and_shows_no_mc_chart():
    app = run_page(screen_path("compare"))
    app.multiselect(key="compare_methods").set_value(["rredcot", "uniform"]).run()
    assert app.button(key="mc_run").disabled
    assert "Add **mc** to the methods above to run it." in [c.value for c in app.main.caption]
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(app) if f["layout"].get("title")]
    assert "Value curves of the estimators" in titles and not any("Monte Carlo" in t for t in titles)
    app.switch_page(screen_path("inspect")).run()
    app.switch_page(screen_path("compare")).run()  # the choice survives a visit to another page
    assert app.multiselect(key="compare_methods").value == ["rredcot", "uniform"]


def test_monte_carlo_runs_in_the_background_and_joins():
    app = run_page(screen_path("compare"))
    app.multiselect(key="compare_methods").set_value(["rredcot", "mc"]).run()
    rollouts = app.number_input(key="mc_rollouts")  # generated from MonteCarloConfig
    start = (rollouts.value, app.number_input(key="mc_max_new_tokens").value)
    assert start in ((8, 160), (4, 96))  # cpu_quick, or cut down where it would take over ~2 minutes here
    if start == (4, 96):
        assert any(c.value.startswith("Started at 4 rollouts of at most 96 tokens") for c in app.main.caption)
    assert rollouts.min == 1 and "continuations sampled from every state" in rollouts.help
    rollouts.set_value(2)
    app.number_input(key="mc_max_new_tokens").set_value(32).run()
    assert "joins the comparison once its rollouts" in app.info[-1].value
    assert any(c.value.startswith("Time") for c in app.main.caption)  # an estimate (or why there is none yet)
    app.button(key="mc_run").click().run()
    jobs = resources.jobs()
    job = jobs.jobs()[0]  # newest first
    assert job.kind == "mc" and job.label.startswith("Monte Carlo on “")  # a name, not a hash
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
    # the page re-used the rollouts its job drew, says so (it said "cached"), and what drawing them cost
    assert cost.loc["mc", "source"].startswith("computed by the Monte Carlo job at ")
    assert cost.loc["mc", "tokens generated"] == job.cost["tokens_generated"]
    assert cost.loc["rredcot", "source"].startswith("cached · computed at ")  # computed on the page's first run
    app.run()  # again: nothing is computed now, and no row says it was at 0 s
    again = app.dataframe[0].value.set_index("method")
    assert not (again["source"] == "computed now").any() and again.loc["rredcot", "source"].startswith("cached")
    texts = [m.value for m in app.markdown]
    assert any(t.startswith("**How far to trust this comparison**") for t in texts)
    lines = next(t for t in texts if "Monte Carlo" in t and t.startswith("- ")).splitlines()
    assert lines[0].startswith("- rredcot") and len(lines) == 2  # the method, then MC's own line
    if "ranks no two segments apart" in lines[0]:  # its few rollouts all tie: nothing to check, and MC says why
        assert lines[0].endswith("so nothing to check.") and "Draw more rollouts" in lines[1]
    else:
        assert "agrees with itself" in lines[1] or "agreement with itself is unknown" in lines[1]
