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
    assert "SmolLM2-135M-Instruct" in app.caption[0].value and "cannot do arithmetic" in app.caption[0].value
    options = app.sidebar.selectbox[0].options
    assert len(options) >= 12
    app.sidebar.selectbox[0].select(options[1]).run()
    assert not app.exception
    assert any(metric.label == "Reasoning tokens" and int(metric.value) > 50 for metric in app.metric)
