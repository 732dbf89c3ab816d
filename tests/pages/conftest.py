"""Page tests run the real app with AppTest against a fresh store of their own."""

from __future__ import annotations

import base64
import json
import os
import tempfile

import numpy as np
import pytest

os.environ.setdefault("RREDCOT_STORE", os.path.join(tempfile.mkdtemp(prefix="rredcot-pages-"), "store.duckdb"))

from streamlit.testing.v1 import AppTest

from rredcot_viz.paths import PROJECT_ROOT

pytestmark = pytest.mark.integration


def run_page(page: str | None = None, timeout: int = 180) -> AppTest:
    app = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=timeout).run()
    if page:
        app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def _decode(value):
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:  # 2-D arrays carry their shape as "rows, columns"
            array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
        return array.tolist()
    if isinstance(value, dict):
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def plotly_figures(app: AppTest) -> list[dict]:
    """Every Plotly chart on the page as a decoded figure dict (arrays arrive as base64 ``bdata``)."""
    return [_decode(json.loads(chart.proto.spec)) for chart in app.get("plotly_chart")]


def figure_titled(app: AppTest, prefix: str) -> dict:
    for figure in plotly_figures(app):
        title = figure["layout"].get("title", {})
        if str(title.get("text", "")).startswith(prefix):
            return figure
    raise AssertionError(f"no Plotly figure titled {prefix!r}")
