"""Links and share buttons: a view's state round-trips through the URL's query parameters (a copied URL reopens
the same trace, model, segmenter, K, estimator and shading), a link naming what this store lacks is a message,
and Inspect, Compare and Diagnose each offer the HTML report."""

from __future__ import annotations

import re

import pytest
from conftest import run_page
from streamlit.testing.v1 import AppTest
from test_inspect import settle

from rredcot_viz.app import screen_path
from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.ui import resources

pytestmark = pytest.mark.integration
REPORT = "Download a shareable report (HTML)"


def open_link(params: dict[str, str], page: str | None = None) -> AppTest:
    app = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=180)
    app.query_params.update(params)
    app.run()
    if page:
        app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_an_inspect_view_round_trips_through_its_url():
    app = run_page()
    samples = resources.samples()
    wanted = samples[2]
    app.sidebar.selectbox(key="trace_Samples").set_value(wanted.content_hash).run()
    app.radio(key="inspect_source").set_value("live").run()
    settle(app)
    app.slider(key="inspect_k").set_value(3).run()
    app.segmented_control(key="inspect_shade").set_value("Q_hat").run()
    app.run()  # the URL is written from the widgets' state at the start of a rerun
    link = dict(app.query_params)
    assert link == {
        "model": "smollm2-135m", "source": "samples", "trace": wanted.content_hash[:16], "scores": "live",
        "segmenter": "hybrid", "k": "3", "estimator": "rredcot", "shade": "Q_hat",
    }  # fmt: skip
    reopened = settle(open_link(link))
    assert reopened.session_state["trace_hash"] == wanted.content_hash
    assert reopened.radio(key="inspect_source").value == "live"
    assert reopened.slider(key="inspect_k").value == 3
    assert reopened.segmented_control(key="inspect_shade").value == "Q_hat"
    assert re.search(r"K = 3 segments", reopened.main.caption[0].value)
    assert not reopened.warning and REPORT in [b.label for b in reopened.get("download_button")]


def test_a_stale_link_says_what_it_could_not_restore():
    app = open_link({"trace": "0123456789abcdef", "k": "1000", "model": "gpt-99", "shade": "colour"})
    (warning,) = [w.value for w in app.warning if "link" in w.value]
    assert "model ` gpt-99 ` is not in the catalogue" in warning
    assert "trace ` 0123456789abcdef ` is not in the samples; showing the first trace instead" in warning
    assert "K ` 1000 ` is not a whole number from 2 to 64" in warning and "shading ` colour ` is not one of" in warning
    assert app.title[0].value == "Inspect"  # the page opened on its defaults for the rest
    stored = open_link({"source": "stored", "collection": "nowhere", "trace": "abcdef"})
    (warning,) = [w.value for w in stored.warning if "link" in w.value]
    assert "collection ` nowhere ` is not in this store;" in warning
    assert "trace ` abcdef ` is not in this store;" in warning and str(resources.store().path) not in warning


def test_a_link_s_text_is_shown_as_text():
    """A value was rendered as Markdown (bold, a link, a remote image the browser fetched); ``k=²`` raised
    ValueError (``"²".isdigit()`` is true)."""
    hostile = "**bold** [click](http://x.test) ![i](http://x.test/i.png) `tick`"
    app = open_link({"model": hostile, "k": "²"})
    (warning,) = [w.value for w in app.warning if "link" in w.value]
    assert f"model `` {hostile} `` is not in the catalogue" in warning  # a code span: shown, not rendered
    assert "K ` ² ` is not a whole number from 2 to 64" in warning


def test_compare_and_diagnose_links_and_report_buttons():
    trace = next(t for t in resources.samples() if t.outcome == 0.0)
    params = {"source": "samples", "trace": trace.content_hash[:16], "segmenter": "line"}
    compare = open_link(params, screen_path("compare"))
    compare.run()
    assert compare.selectbox(key="compare_segmenter").value == "line"
    assert compare.session_state["trace_hash"] == trace.content_hash
    assert compare.query_params["methods"] in ("rredcot,loo,grad_x_input", ["rredcot,loo,grad_x_input"])  # in the link
    chosen = open_link({**params, "methods": "rredcot,mc"}, screen_path("compare"))  # a reload keeps mc
    assert chosen.multiselect(key="compare_methods").value == ["rredcot", "mc"] and not chosen.exception
    assert REPORT in [b.label for b in compare.get("download_button")]
    diagnose = open_link(params, screen_path("diagnose"))
    diagnose.run()
    assert diagnose.selectbox(key="diagnose_segmenter").value == "line"
    assert REPORT in [b.label for b in diagnose.get("download_button")]
