"""Sharing (workflows/report.py): what a report names, the settings it records, and an atomic write."""

from __future__ import annotations

import dataclasses
import os
import stat

import pytest
from hostile import HOSTILE

from rredcot_viz.engine import AnalysisConfig
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.workflows import report


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "store.duckdb")
    yield store
    store.close()


def test_targets_runs_then_traces_by_id_or_hash(store):
    samples = sample_traces()[:3]
    store.put_traces([HOSTILE], "user")
    store.put_run("train-a", "train", {}, {"method": "grpo"}, 0)
    store.put_train_rollouts("train-a", 1, [{"text": "x", "reward": 1.0}])
    assert report.find_target(store, "train-a", samples).run_id == "train-a"
    assert report.find_target(store, "hostile", samples).trace == HOSTILE
    assert report.find_target(store, samples[1].content_hash[:8].upper(), samples).trace == samples[1]
    with pytest.raises(RredcotError, match="'nothing' is not a run with stored rollouts, a trace id or a trace"):
        report.find_target(store, "nothing", samples)


def test_a_trace_is_found_by_the_id_it_was_imported_again_under(store):
    """Stored first without an id, a trace imported again as "gsm8k-17" was not found: its id was dropped."""
    store.put_traces([dataclasses.replace(HOSTILE, trace_id=None)], "dataset:first")
    store.put_traces([dataclasses.replace(HOSTILE, trace_id="gsm8k-17")], "dataset:second")
    found = report.find_target(store, "gsm8k-17", sample_traces()).trace
    assert found.content_hash == HOSTILE.content_hash and found.trace_id == "gsm8k-17"


def test_settings_and_names():
    segmenter, estimator = segmenters.get("hybrid")(k=5), estimators.get("answer_only")()
    settings = report.analysis_settings(segmenter, estimator, AnalysisConfig(variant="difference"))
    assert settings["segmenter"] == "hybrid" and settings["segmenter settings"]["k"] == 5
    assert settings["estimator"] == "answer_only" and settings["analysis"]["variant"] == "difference"
    assert report.report_name("run", "rollouts-my run/7") == "rredcot-run-rollouts-my-run-7.html"


def test_the_write_is_atomic(tmp_path, monkeypatch):
    out = report.write_report("<html>one</html>", tmp_path / "deep" / "r.html")
    assert out.read_text() == "<html>one</html>" and stat.S_IMODE(out.stat().st_mode) == report.REPORT_MODE

    def broken(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        report.write_report("<html>two</html>", out)
    assert out.read_text() == "<html>one</html>"  # the old report, whole
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.html"]  # and no temporary file left behind
