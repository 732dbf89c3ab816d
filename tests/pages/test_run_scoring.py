"""Scoring an imported RL run on the Dataset page tells the truth: the estimator it opens on runs on the run's
traces, one that cannot run is refused before any job starts (with what the traces lack), a job whose every row
failed reads as failed, and no credit selector appears for credit that was never computed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_page
from rl_logs import trl_run

from rredcot_viz.app import screen_path
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.importers import import_file
from rredcot_viz.ui import resources
from rredcot_viz.workflows import runs
from rredcot_viz.workflows.dataset import DatasetRecord, save_run

pytestmark = pytest.mark.integration


def run_view(folder: Path):
    """The Dataset page on a run imported from ``folder``; and the run's collection."""
    stored, run = runs.store_import(resources.store(), import_file(folder))
    app = run_page(screen_path("dataset"))
    app.selectbox(key="runs_run").set_value(run.run_id).run()
    assert not app.exception, [e.value for e in app.exception]
    return app, stored.collection


def test_a_run_opens_on_an_estimator_that_runs_and_refuses_one_that_cannot(tmp_path):
    app, collection = run_view(trl_run(tmp_path / "grpo-noref", solution=False))
    assert app.selectbox(key="runs_estimator").value == "own_answer"  # not rredcot, which runs on none
    assert "Capability check: own_answer: runs on 4 of 4 records." in [c.value for c in app.caption]
    score = app.button(key="runs_score")
    assert score.label == "Score 4 distinct rollouts" and not score.disabled
    app.selectbox(key="runs_estimator").set_value("rredcot").run()
    refusal = [e.value for e in app.error if e.value.startswith("estimator 'rredcot'")]
    assert refusal == [
        "estimator 'rredcot' cannot run on any of the 4 traces: 4 lack a reference answer; 4 lack a reference "
        "solution (the reference path for v-hat); own_answer, uniform can run on them"
    ]
    assert app.button(key="runs_score").disabled and "runs_job" not in app.session_state  # no job was started
    assert not [s for s in app.selectbox if s.key == "runs_analysis"]  # no credit to choose
    app.selectbox(key="dataset_collection").set_value(collection).run()  # the dataset analysis below the run view
    assert app.selectbox(key="dataset_estimator").value == "own_answer"
    assert "Capability check: own_answer: runs on 4 of 4 records." in [c.value for c in app.caption]


def test_a_scoring_job_whose_every_row_failed_is_reported_as_failed(tmp_path, monkeypatch):
    app, _ = run_view(trl_run(tmp_path / "grpo-fails", solution=False))

    def broken(*_args, **_kwargs):
        raise RredcotError("the model is out of order")

    monkeypatch.setattr("rredcot_viz.workflows.dataset.compare", broken)  # every trace fails after the check
    app.button(key="runs_score").click().run()
    job = resources.jobs().wait(resources.jobs().get(app.session_state["runs_job"]), timeout=300)
    assert job.status == "failed" and job.error == "all 4 traces failed; the first: the model is out of order"
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert "all 4 traces failed; the first: the model is out of order" in [e.value for e in app.error]
    assert not [s for s in app.selectbox if s.key == "runs_analysis"]
    assert any("No RREDCoT credit yet" in i.value for i in app.info)


def test_an_analysis_that_stored_only_errors_offers_no_credit(tmp_path):
    """A run scored before this check existed: its analysis holds an error per trace, which is no credit."""
    _, run = runs.store_import(resources.store(), import_file(trl_run(tmp_path / "grpo-old", solution=False)))
    store = resources.store()
    failed = [
        DatasetRecord(t.content_hash, None, t.source, t.outcome, error="estimator 'rredcot' needs a reference answer")
        for t in runs.run_traces(store, run.run_id)
    ]
    save_run(store, {"name": "toy"}, segmenters.get("line")(), estimators.get("rredcot")(), failed, run.run_id)
    app = run_page(screen_path("dataset"))
    app.selectbox(key="runs_run").set_value(run.run_id).run()
    assert not [s for s in app.selectbox if s.key == "runs_analysis"]
    assert any("No RREDCoT credit yet" in i.value for i in app.info)
