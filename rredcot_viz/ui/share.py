"""Share buttons: each page's view as one self-contained HTML file (``figures.report``), built only when the
button is clicked (a callable download: no cost on the page's reruns, no rerun on the click).

    inspect_download(analysis)                     # screens/inspect.py, one line each
    compare_download(comparison, analyzer, segmenter, options, metric)
    diagnose_download(analyzer, trace, segmenter, segments, verdicts)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from rredcot_viz.diagnosis import FirstError
from rredcot_viz.diagnosis.value_detectors import curve_estimator
from rredcot_viz.engine import Analyzer
from rredcot_viz.engine.recorded import recorded_result
from rredcot_viz.estimators import estimators
from rredcot_viz.figures.report import analysis_report, comparison_report, diagnosis_report, run_report
from rredcot_viz.segmenters import Segment, Segmenter
from rredcot_viz.settings import config_json
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui.analysis import Analysis
from rredcot_viz.workflows.compare import Comparison
from rredcot_viz.workflows.report import analysis_settings, report_name
from rredcot_viz.workflows.runs import RolloutGroup

LABEL = "Download a shareable report (HTML)"
HELP = (
    "One self-contained HTML file: the trace with its heatmap and hover values, the curves, the table, the "
    "settings and the model with its fingerprint. It opens offline in any browser; no server needed."
)


def download(build: Callable[[], str], file_name: str, key: str) -> None:
    """The report button: ``build`` runs when it is clicked, on its own thread, and the page does not rerun."""
    st.download_button(LABEL, data=build, file_name=file_name, mime="text/html", on_click="ignore", key=key, help=HELP)


def inspect_download(analysis: Analysis) -> None:
    """Inspect's view: the analysis with the shading chosen on the page."""
    result = analysis.result
    shade = st.session_state.get("inspect_shade") or "sigma"
    if analysis.analyzer is not None and analysis.segmenter is not None and analysis.estimator is not None:
        model: Mapping[str, Any] = analysis.analyzer.lm.info()
        settings = analysis_settings(analysis.segmenter, analysis.estimator, analysis.analyzer.config)
    else:
        recorded = recorded_result(result.trace)
        recording = recorded[0] if recorded else None
        model = {"name": recording.model, "fingerprint": recording.fingerprint} if recording else {}
        settings = {"scores": recording.label if recording else "recorded", **(recording.settings if recording else {})}
    name = report_name("inspect", result.trace.trace_id or result.trace.short_id)
    relative = bool(st.session_state.get("inspect_relative"))
    download(lambda: analysis_report(result, model, settings, shade, relative=relative), name, "inspect_report")


def compare_download(
    comparison: Comparison, analyzer: Analyzer, segmenter: Segmenter, options: Mapping[str, Any], metric: str
) -> None:
    """Compare's view: every method's scores on the shared segments."""
    settings = {
        "segmenter": segmenter.name,
        "segmenter settings": config_json(segmenter.config),
        "methods": ", ".join(comparison.methods),
        **{f"{name} settings": options.get(name) for name in comparison.methods if options.get(name)},
        "analysis": config_json(analyzer.config),
        "agreement metric": metric,
    }
    trace = comparison.trace
    name = report_name("compare", trace.trace_id or trace.short_id)
    relative = bool(st.session_state.get("compare_relative"))
    model = analyzer.lm.info()
    download(lambda: comparison_report(comparison, model, settings, metric, relative=relative), name, "compare_report")


def diagnose_download(
    analyzer: Analyzer, trace: Trace, segmenter: Segmenter, segments: list[Segment], verdicts: Mapping[str, FirstError]
) -> None:
    """Diagnose's view: the detectors' verdicts on the text and the value curve (from the cache)."""

    def build() -> str:
        estimator_name = curve_estimator(trace)
        estimate = analyzer.analyze(trace, segmenter, estimators.get(estimator_name)()) if estimator_name else None
        settings = {
            "segmenter": segmenter.name,
            "segmenter settings": config_json(segmenter.config),
            "detectors": ", ".join(verdicts),
            "value curve": estimator_name or "none",
            "analysis": config_json(analyzer.config),
        }
        return diagnosis_report(trace, segments, verdicts, estimate, analyzer.lm.info(), settings)

    download(build, report_name("diagnose", trace.trace_id or trace.short_id), "diagnose_report")


def run_download(
    run_id: str, groups: list[RolloutGroup], steps: Any, settings: Mapping[str, Any], shown: list[RolloutGroup]
) -> None:
    """The run view: reward and credit per step and the groups on screen."""
    download(lambda: run_report(run_id, groups, steps, settings, shown), report_name("run", run_id), "runs_report")
