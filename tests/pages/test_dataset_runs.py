"""The Dataset page's run view: an imported TRL run by step and prompt, its rollouts scored with RREDCoT in the
background, the most disagreeing groups, and a link that opens one step."""

from __future__ import annotations

import re

import pytest
from conftest import figure_titled, run_page
from rl_logs import trl_run
from test_links import open_link

from rredcot_viz.app import screen_path
from rredcot_viz.traces.importers import import_file
from rredcot_viz.ui import resources
from rredcot_viz.workflows.runs import store_import

pytestmark = pytest.mark.integration


def columns(app) -> list[tuple[str, str]]:
    body = next(h.proto.body for h in app.get("html") if "rc-columns" in h.proto.body)
    return re.findall(r'data-step="(\d+)" data-prompt="(\d+)"', body)


def test_an_imported_run_by_step_prompt_and_credit(tmp_path):
    _, run = store_import(resources.store(), import_file(trl_run(tmp_path / "grpo-out")))
    app = run_page(screen_path("dataset"))
    assert "RL runs" in [h.value for h in app.header]
    app.selectbox(key="runs_run").set_value(run.run_id).run()
    steps = figure_titled(app, "Reward and credit per step")
    reward = next(t for t in steps["data"] if t["name"] == "reward (mean)")
    assert reward["x"] == [1, 2] and reward["y"] == pytest.approx([2 / 3, 2.0])
    assert any("No RREDCoT credit yet" in i.value for i in app.info)
    assert columns(app) == [("1", "0"), ("2", "0")]  # prompt 0 across its steps, side by side
    assert dict(app.query_params) == {"run": run.run_id, "prompt": "0"}

    app.selectbox(key="runs_score_step").set_value(1)
    app.selectbox(key="runs_segmenter").set_value("line")
    app.selectbox(key="runs_estimator").set_value("answer_only").run()
    app.button(key="runs_score").click().run()
    job = resources.jobs().get(app.session_state["runs_job"])
    assert resources.jobs().wait(job, timeout=600).status == "done", job.error
    app.run()  # the job's end is seen (AppTest does not fire the progress fragment's timer)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.session_state["runs_analysis"] == job.result
    top = app.dataframe(key="runs_top").value
    # step 2's completions are step 1's right ones (the same traces, so scored too); all right there: no gap
    assert top["step"].tolist() == [1, 1, 2, 2] and top["credited"].tolist() == [3, 3, 3, 3]
    assert top["disagreement"].is_monotonic_decreasing and top["disagreement"].tolist()[2:] == [0.0, 0.0]
    body = next(h.proto.body for h in app.get("html") if "rc-columns" in h.proto.body)
    assert body.count("data-advantage=") > 0 and "GRPO" in body

    step = open_link({"run": run.run_id, "step": "2"}, screen_path("dataset"))
    assert step.radio(key="runs_view").value == "One step" and columns(step) == [("2", "0"), ("2", "1")]
    assert "Download a shareable report (HTML)" in [b.label for b in step.get("download_button")]


def test_a_link_with_a_superscript_prompt_or_an_unknown_run_is_a_message(tmp_path):
    """``prompt=²`` raised ValueError (``"²".isdigit()`` is true); an unknown run's name was rendered as Markdown."""
    _, run = store_import(resources.store(), import_file(trl_run(tmp_path / "grpo-sup")))
    app = open_link({"run": run.run_id, "prompt": "²"}, screen_path("dataset"))
    default = open_link({"run": run.run_id}, screen_path("dataset"))  # prompt 0, or the most disagreeing once scored
    assert app.session_state["runs_run"] == run.run_id and columns(app) == columns(default)
    assert columns(app) in ([("1", "0"), ("2", "0")], [("1", "1"), ("2", "1")])
    unknown = open_link({"run": "**bold** ![i](http://x.test/i.png)"}, screen_path("dataset"))
    (warning,) = [w.value for w in unknown.warning if "link" in w.value]
    assert warning.startswith("This link's run ` **bold** ![i](http://x.test/i.png) ` is not in this store;")
