"""The self-contained report (figures/report.py): one file holding the Plotly bundle once, the app's heatmap
with hover values, the curves, the table, settings and model; hostile trace text stays text everywhere."""

from __future__ import annotations

import datetime as dt
import json
import re

import plotly.graph_objects as go
import pytest
from hostile import HOSTILE

from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.figures.colors import APP_COLOURS
from rredcot_viz.figures.report import analysis_report, comparison_report, diagnosis_report, report_page
from rredcot_viz.segmenters import segmenters
from rredcot_viz.workflows.compare import compare

CREATED = dt.datetime(2026, 12, 6, 12, 30, tzinfo=dt.UTC)
SETTINGS = {"segmenter": "line", "estimator": "rredcot", "note": "<b>bold</b> & more"}


@pytest.fixture(scope="module")
def analysis(tiny):
    return Analyzer(tiny).analyze(HOSTILE, segmenters.get("line")(), estimators.get("rredcot")())


def outside_scripts(html: str) -> str:
    """The markup a browser parses as HTML: everything but the contents of <script> elements."""
    return re.sub(r"<script>.*?</script>", "<script></script>", html, flags=re.DOTALL)


def test_an_analysis_report_is_one_offline_file(analysis, tiny):
    html = analysis_report(analysis, tiny.info(), SETTINGS, created=CREATED)
    assert html.count("<script>") == 1 + 2 and html.count("Plotly.newPlot") == 2  # the bundle, two figures
    from plotly.offline import get_plotlyjs

    assert get_plotlyjs()[:2000] in html  # the installed package's bundle, inline
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", outside_scripts(html))  # nothing to fetch
    assert "default-src 'none'" in html  # and the page may not fetch anything either
    assert html.count('class="rc-seg"') == analysis.k
    sigma = f"sigma = {analysis.sigma[0]:+.4f}"
    assert sigma in html  # the first segment's hover value
    assert f"model fingerprint</dt><dd>{tiny.fingerprint}</dd>" in html and "created 2026-12-06T12:30:00+00:00" in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; more" in html  # settings escaped
    assert html.count("<tr") - 1 == analysis.k  # one table row per segment (plus the header)


def test_hostile_text_is_escaped_everywhere(analysis, tiny):
    html = analysis_report(analysis, tiny.info(), SETTINGS, created=CREATED)
    markup = outside_scripts(html)
    for raw in ('<script>alert("x")</script>', "<img src=x onerror=alert(1)>", '<a href="javascript:alert(2)">'):
        assert raw not in markup
    assert (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in markup
        and "What does &lt;b&gt;this&lt;/b&gt; do?" in markup
    )
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.DOTALL)[1:]
    assert all("</script" not in s and "alert(" not in s for s in scripts)  # figure data cannot close a script


def test_comparison_and_diagnosis_reports(tiny, analysis):
    analyzer = Analyzer(tiny)
    comparison = compare(analyzer, HOSTILE, segmenters.get("line")(), ["rredcot", "answer_only"])
    html = comparison_report(comparison, tiny.info(), SETTINGS, created=CREATED)
    assert "Shaded by rredcot." in html and html.count('class="rc-seg"') == comparison.segmentation.k
    assert "answer_only = " in html  # every method's score in the hover
    from rredcot_viz.diagnosis import detectors

    segmenter = segmenters.get("line")()
    verdict = detectors.get("value_drop")().detect(analyzer, HOSTILE, segmenter)
    segmentation = analyzer.segment(HOSTILE, segmenter)
    html = diagnosis_report(HOSTILE, segmentation.segments, {"value_drop": verdict}, analysis, tiny.info(), SETTINGS,
                            created=CREATED)  # fmt: skip
    assert "value_drop score = " in html and "detectors flagging = " in html
    assert '<script>alert("x")' not in outside_scripts(html)


def test_a_page_without_figures_carries_no_bundle():
    html = report_page("Plain", [("Section", "<p>text</p>")], {"model": "m<1>"}, CREATED)
    assert "<script>" not in html and "model: m&lt;1&gt;" in html


@pytest.fixture
def app_process():
    """Figures built as in the app: importing Streamlit makes its template, whose colours are placeholders that
    only its page replaces, the default of every new figure."""
    import plotly.io as pio
    import streamlit  # noqa: F401

    before = pio.templates.default
    pio.templates.default = "streamlit"
    yield
    pio.templates.default = before


def test_a_report_built_in_the_app_keeps_the_apps_colours(app_process, analysis, tiny):
    """Every chart of a report downloaded from the app was black: its colour list was #000001, #000002, ..."""
    assert go.Figure().layout.template.layout.colorway[:2] == ("#000001", "#000002")  # what the app builds
    html = analysis_report(analysis, tiny.info(), SETTINGS, created=CREATED)
    figures = html.split("</script>", 1)[1]  # past the Plotly bundle: the figures' data
    assert not re.search(r"#0000[0-4]\d", figures)
    colorways = [json.loads(f"[{c}]") for c in re.findall(r'"colorway":\[([^\]]*)\]', figures)]
    assert len(colorways) == 2 and all(c == list(APP_COLOURS) for c in colorways)
    assert len(set(APP_COLOURS)) == 10 and APP_COLOURS[0] == "#0068c9"  # Streamlit's light theme, first blue


def test_a_comparison_report_titles_its_heatmap_by_the_scale_it_uses(tiny):
    comparison = compare(Analyzer(tiny), HOSTILE, segmenters.get("line")(), ["rredcot", "answer_only"])
    absolute = comparison_report(comparison, tiny.info(), SETTINGS, created=CREATED)
    assert "rows scaled" not in absolute  # the title said so while the colours were absolute
    assert shown("Methods × segments (absolute scale: full colour at |value| ≥ 1)", absolute)
    assert 'data-scale="absolute"' in absolute  # the trace's heatmap on the same scale
    relative = comparison_report(comparison, tiny.info(), SETTINGS, created=CREATED, relative=True)
    assert shown("Methods × segments, each row relative to its largest |value|", relative)
    assert 'data-scale="relative"' in relative and "(max |v| " in relative


def shown(title: str, html: str) -> bool:
    """Whether a figure of ``html`` carries ``title`` (Plotly's JSON writes non-ASCII as \\u escapes)."""
    return f'"title":{{"text":{json.dumps(title)}}}' in html
