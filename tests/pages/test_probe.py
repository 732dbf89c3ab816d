"""The value probe on the Compare page (ui/probe_views.py): without a probe for the loaded model, one line says
how to fit one and ``probe`` waits; with one, the page says what it was fitted on and ``probe`` joins the
comparison like any estimator."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import figure_titled, run_page

from rredcot_viz.app import screen_path
from rredcot_viz.estimators.value_probe import ValueProbe, precision_of, probe_path

pytestmark = pytest.mark.integration


def test_compare_says_how_to_fit_a_probe_then_runs_the_fitted_one(tmp_path, monkeypatch, embedded_lm):
    monkeypatch.setenv("RREDCOT_DATA_DIR", str(tmp_path))
    app = run_page(screen_path("compare"))
    line = next(c.value for c in app.main.caption if c.value.startswith("no value probe for model"))
    assert f"({precision_of(embedded_lm)})" in line and "python -m rredcot_viz probe fit" in line
    assert app.button(key="probe_fit") is not None  # the fit panel, a background job
    app.multiselect(key="compare_methods").set_value(["rredcot", "probe"]).run()
    assert not app.exception
    assert any("**probe** joins the comparison once a value probe is fitted" in i.value for i in app.info)
    assert figure_titled(app, "Methods × segments")["data"][0]["y"] == ["rredcot"]

    lm, d = embedded_lm, embedded_lm.model.config.hidden_size
    probe = ValueProbe(lm.name, lm.fingerprint, precision_of(lm), 3, 10.0, np.full(d, 0.01), 0.0, np.zeros(d),
                       np.ones(d), {"states": 200, "problems": 26}, {"heldout_brier": 0.2, "heldout_pairs": 0.6,
                       "heldout_problems": 11.0}, "2026-12-07T00:00:00Z")  # fmt: skip
    probe.save(probe_path(lm.name, lm.fingerprint, precision_of(lm)))
    app.run()
    assert not app.exception
    assert any(c.value.startswith("Value probe for this model") and "Brier 0.200" in c.value for c in app.main.caption)
    assert figure_titled(app, "Methods × segments")["data"][0]["y"] == ["rredcot", "probe"]
