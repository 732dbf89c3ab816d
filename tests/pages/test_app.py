"""The app's entry page starts, loads the embedded model and shows a sample trace."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from rredcot_viz.paths import PROJECT_ROOT

pytestmark = pytest.mark.integration


def test_app_shows_a_sample_trace():
    app = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120).run()
    assert not app.exception
    assert app.title[0].value == "RREDCoT Explorer"
    caption = app.main.caption[0].value
    assert "SmolLM2-135M-Instruct" in caption and "cannot do arithmetic" in caption
    assert len(app.sidebar.selectbox(key="model").options) == 3
    options = app.sidebar.selectbox(key="trace").options
    assert len(options) >= 12
    app.sidebar.selectbox(key="trace").select(options[1]).run()
    assert not app.exception
    assert any(metric.label == "Reasoning tokens" and int(metric.value) > 50 for metric in app.metric)


def test_unfetched_optional_model_shows_how_to_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("RREDCOT_CACHE_DIR", str(tmp_path))  # nothing fetched here
    app = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120).run()
    app.sidebar.selectbox(key="model").select("qwen2.5-coder-1.5b").run()
    assert not app.exception
    assert "fetch-model qwen2.5-coder-1.5b" in app.error[0].value
