"""The Inspect page's analysis of one trace: the shipped recording of a sample, or a live analysis with the
loaded model (its own cost, a first look at R-hat while v-hat is scored, a message instead of a traceback)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from rredcot_viz.engine import AnalysisResult, Analyzer
from rredcot_viz.engine.recorded import recorded_result
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.figures import trace_heatmap
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.meter import measure
from rredcot_viz.scoring import TraceContext
from rredcot_viz.segmenters import Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost
from rredcot_viz.ui import resources
from rredcot_viz.ui.widgets import (
    StreamlitProgress,
    estimator_controls,
    model_warning,
    segmentation_controls,
    trace_text_input,
    usable_estimator,
)


@dataclass
class Analysis:
    """What a page shows of one trace's analysis, and where it came from."""

    result: AnalysisResult
    cost: CallCost | None = None  # None: recorded scores, no model work
    first_time: bool = False
    analyzer: Analyzer | None = None
    context: TraceContext | None = None
    segmenter: Segmenter | None = None

    @property
    def cost_caption(self) -> str:
        if self.cost is None:
            return "recorded: no model calls"
        if self.cost.calls == 0:
            return "no model calls (from the cache)"
        first = " · first analysis of this trace" if self.first_time else ""
        return f"{self.cost.calls} model call: {self.cost.tokens_processed} tokens in {self.cost.seconds:.1f} s{first}"


def recorded_analysis(prefix: str, trace: Trace) -> Analysis | None:
    """The shipped recording of a sample (a stronger model's scores) unless the user asks for live scores;
    None when there is no recording or live was chosen."""
    recorded = recorded_result(trace)
    if recorded is None:
        return None
    recording, result = recorded
    labels = {
        "recorded": recording.label[0].upper() + recording.label[1:],
        "live": "Re-score live with the loaded model",
    }
    if st.radio("Scores", list(labels), format_func=labels.get, horizontal=True, key=f"{prefix}_source") == "live":
        return None
    st.info(
        f"These scores were {recording.label}, a model whose values move before the answer is written "
        f"(segmenter {recording.settings['segmenter']}; estimator {recording.settings['estimator_name']}). Choose "
        "“Re-score live” to see what the loaded model makes of this trace.",
        icon="📼",
    )
    return Analysis(result)


def live_analysis(prefix: str, config: ModelConfig, trace: Trace) -> Analysis:
    """Segmentation and estimator controls, then the analysis with the loaded model (progress bar, its own cost);
    a failure stops the page with a message, never a traceback."""
    model_warning(config)
    segmenter = segmentation_controls(prefix, trace, text_input=trace_text_input(config, trace))
    estimator, analysis_config = estimator_controls(prefix)
    name, fallback_note = usable_estimator(estimator.name, trace)
    if fallback_note:
        st.info(fallback_note)
        estimator = estimators.get(name)(**{"aggregation": getattr(estimator.config, "aggregation", "mean_prob")})
    progress = None
    try:
        analyzer = resources.analyzer(config, analysis_config)
        context = analyzer.context(trace)
        first_time = not context.has_stats
        progress = StreamlitProgress(
            "Scoring this segmenter's candidate boundaries (another K is then instant; another segmenter scores "
            "only the boundaries it adds)"
        )
        preview = st.empty()
        with measure() as spent:  # this computation's own cost, not other tabs' or jobs'
            if first_time and "reference_solution" in estimator.needs:
                with preview.container():
                    _r_hat_preview(analyzer, trace, segmenter, getattr(estimator.config, "aggregation", "seq_prob"))
            result = analyzer.analyze(trace, segmenter, estimator, progress=progress)
        preview.empty()
        progress.close()
    except Exception as error:  # the page boundary: a message, never a traceback
        if progress is not None:
            progress.close()
        st.error(
            str(error) if isinstance(error, RredcotError) else f"The analysis failed: {type(error).__name__}: {error}"
        )
        st.stop()
    return Analysis(result, spent.cost, first_time, analyzer, context, segmenter)


def _r_hat_preview(analyzer: Analyzer, trace: Trace, segmenter: Segmenter, aggregation: str) -> None:
    """R-hat alone (a few short continuations, seconds) shown while v-hat's long reference continuations are
    scored, so a first look never waits for the whole analysis; the full result replaces it."""
    quick = analyzer.analyze(trace, segmenter, estimators.get("answer_only")(aggregation=aggregation))
    segments = quick.segmentation.segments
    st.caption("First look: R̂ alone (chance of the right answer if the trace stopped here); v̂ is being computed…")
    st.html(
        trace_heatmap(
            [s.text for s in segments],
            quick.sigma,
            [{"R_hat": float(quick.values.values[s.index]), "sigma": float(quick.sigma[s.index])} for s in segments],
            answer_text=trace.cot[segments[-1].char_span[1] :],
        )
    )
