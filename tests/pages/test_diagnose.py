"""The Diagnose page: verdicts on a failed sample, reset resampling as a tree, the stored evaluation view."""

from __future__ import annotations

import pytest
from conftest import figure_titled, run_page
from planted import STEP_RECORDS

from rredcot_viz.app import screen_path
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

    app = run_page(screen_path("diagnose"))
    assert app.title[0].value == "Diagnose"
    options = app.sidebar.selectbox(key="trace_Samples").options
    assert options and all(o.endswith("· failed") for o in options)
    verdicts = app.dataframe[0].value
    assert list(verdicts["detector"]) == [
        "min_sigma[rredcot]", "value_drop[rredcot]", "loo[reference]", "step_verifier", "label"
    ]  # fmt: skip
    assert app.get("html")[0].proto.body.count("data-segment=") >= 2
    suffixes = app.number_input(key="diagnose_reset_suffixes")  # generated from ResetConfig
    assert suffixes.value == 4 and suffixes.min == 1 and "suffixes G" in suffixes.help
    suffixes.set_value(2)
    app.number_input(key="diagnose_reset_max_new_tokens").set_value(64)
    app.button(key="diagnose_resample").click().run()
    assert not app.exception
    job = resources.jobs().get(app.session_state["reset_job"])
    assert job.kind == "reset" and "before segment" in job.label  # a background job with a name
    assert resources.jobs().wait(job, timeout=300).status == "done", job.error
    app.run()
    tree = figure_titled(app, "Reset resampling")
    assert len(tree["data"]) == 3  # the original trace and two suffixes
    assert "suffixes reach the reference answer" in " ".join(c.value for c in app.main.caption)
    confusion = figure_titled(app, "min_sigma: predicted vs labelled")
    assert confusion["data"][0]["z"][1][1] == 1  # labelled step 1, predicted step 1
    assert app.dataframe[-1].value["detector"].tolist() == ["min_sigma"]


def test_an_evaluation_starts_as_a_job_and_its_run_opens(tmp_path, monkeypatch):
    import json

    folder = tmp_path / "processbench"
    folder.mkdir()
    (folder / "tiny_split.json").write_text(json.dumps(STEP_RECORDS))
    monkeypatch.setenv("RREDCOT_SHARED_DATA", str(tmp_path))
    app = run_page(screen_path("diagnose"))
    assert app.selectbox(key="eval_file").options == ["processbench/tiny_split.json", "upload a file"]
    app.text_input(key="eval_sample").set_value("3")  # optional (empty = the whole file): a text box
    app.multiselect(key="eval_detectors").set_value(["min_sigma"])
    app.button(key="FormSubmitter:eval_form-Evaluate in the background").click().run()
    assert not app.exception
    job = resources.jobs().get(app.session_state["eval_job"])
    assert (job.kind, job.unit, job.total) == ("diagnosis", "traces", 3)  # real units from the start
    app.button(key="FormSubmitter:eval_form-Evaluate in the background").click().run()  # asked twice
    assert app.session_state["eval_job"] == job.id and job.requests == 2  # the second request joined the first
    assert "The same job was already running" in " ".join(i.value for i in app.info)
    info = " ".join(i.value for i in app.info)
    assert "Capability check" in info and "min_sigma[own_answer]: runs on 3 of 3 records" in info
    resources.jobs().wait(job, timeout=300)
    assert job.status == "done", job.error
    app.run()
    runs = app.selectbox(key="diagnose_run")
    assert runs.value == job.result and runs.format_func(runs.value).startswith("tiny_split (balanced 3, seed 0)")
    table = app.dataframe[-1].value
    assert table["detector"].tolist() == [
        "min_sigma[own_answer]",
        "always_no_error",
        "always_first",
        "always_last",
        "uniform_random",
        "outcome_then_first",
        "outcome_then_last",
        "outcome_then_random",
    ]
    assert table["n"].tolist() == [3] * 8
