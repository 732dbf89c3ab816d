"""The Inspect page's analysis of one trace: the shipped recording of a sample, or a live analysis with the
loaded model (its own cost, a first look at R-hat while v-hat is scored, a message instead of a traceback)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import streamlit as st

from rredcot_viz.engine import AnalysisResult, Analyzer
from rredcot_viz.engine.recorded import recorded_result
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import ValueEstimator, estimators, usable_estimator
from rredcot_viz.figures import trace_heatmap
from rredcot_viz.jobs import Job
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.scoring import TraceContext
from rredcot_viz.segmenters import Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import JobTexts, jobs_panel, show_job
from rredcot_viz.ui.method_controls import estimator_picker, richer_choices, segmenter_picker
from rredcot_viz.ui.pickers import model_warning, trace_text_input
from rredcot_viz.workflows.analyze import FINISHED, AnalysisWork, provenance, start

REUSE_NOTE = (
    "Another K, aggregation or variant reuses the scores already computed (no model call); another estimator, or "
    "a segmenter with boundaries of its own (sentence, fixed tokens, adaptive entropy), scores only what is missing."
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
    notes: tuple[str, ...] = ()
    estimator: ValueEstimator | None = None  # None: recorded scores
    about: dict[str, str] = field(default_factory=dict)  # the model and settings, for exported rows

    @property
    def cost_caption(self) -> str:
        if self.cost is None:
            return "recorded: no model calls"
        if self.cost.calls == 0:
            return "no model calls (from the cache)"
        job = " · computed in the background for these settings" if self.first_time else ""
        calls = f"{self.cost.calls} model call{'s' if self.cost.calls > 1 else ''}"
        return f"{calls}: {self.cost.tokens_processed} tokens in {self.cost.seconds:.1f} s{job}"


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
        f"These scores were {recording.label} "
        f"(segmenter {recording.settings['segmenter']}; estimator {recording.settings['estimator_name']}). "
        "Checked against Monte Carlo on 16 of this model's own GSM8K traces, RREDCoT's credit orders 0.475 of the "
        "segment pairs as MC does, below random (MC agrees with itself on 0.724; MC with 2 rollouts per state, at "
        "the same cost, 0.629; docs/BENCHES.md): read the colours before the last segment as where this model's "
        "own estimates moved, not as which step helped, and check a step with Monte Carlo on the Compare page. "
        "Choose “Re-score live” to see what the loaded model makes of this trace.",
        icon="📼",
    )
    about = {"model": recording.model, "model_fingerprint": recording.fingerprint, "source": "recorded scores",
             "settings": json.dumps(recording.settings, sort_keys=True, default=str)}  # fmt: skip
    return Analysis(result, about=about)


def live_analysis(prefix: str, config: ModelConfig, trace: Trace) -> Analysis:
    """Segmentation and estimator controls, then the analysis with the loaded model: from the cache at once
    when every score is known, else as a background job (``workflows.analyze``) that this page watches; a
    failure is a message, never a traceback."""
    model_warning(config)
    segmenter = segmenter_picker(prefix, trace, text_input=trace_text_input(config, trace))
    estimator, analysis_config = estimator_picker(prefix, trace=trace)
    name, fallback_note = usable_estimator(estimator.name, trace)
    if fallback_note:
        st.info(fallback_note)
        st.caption(richer_choices(trace))
        estimator = fallback(estimator, name)
    jobs = resources.jobs()
    waited = f"{prefix}_waited_job"  # the job this session watched: its cost is this analysis's cost
    try:
        work = AnalysisWork(resources.analyzer(config, analysis_config), trace, segmenter, estimator)
        if work.pending:
            job = start(work, jobs)
            st.session_state[waited] = job.id
            jobs_panel(again=True)  # the sidebar's list, drawn before this page, shows the new job running
            watch(job, work)  # stops the page; the job's end reruns it
        result = work.result()
    except Exception as error:  # the page boundary: a message, never a traceback
        st.error(
            str(error) if isinstance(error, RredcotError) else f"The analysis failed: {type(error).__name__}: {error}"
        )
        st.stop()
    job = jobs.get(st.session_state.pop(waited, ""))
    cost = CallCost()  # served from the cache
    if job is not None and job.status == "done":
        cost = CallCost(**{k: v for k, v in job.cost.items() if k in CallCost.__dataclass_fields__})
    context = work.analyzer.context(trace)
    about = provenance(work.analyzer, segmenter, {"estimator": estimator.name, **asdict(estimator.config)})
    return Analysis(result, cost, job is not None, work.analyzer, context, segmenter, (REUSE_NOTE,), estimator, about)


def fallback(chosen: ValueEstimator, name: str) -> ValueEstimator:
    """Estimator ``name`` in place of ``chosen``, keeping the chosen aggregation where both have one."""
    aggregation = getattr(chosen.config, "aggregation", None)
    settings = estimators.get(name).Config.__dataclass_fields__
    return estimators.get(name)(**({"aggregation": aggregation} if aggregation and "aggregation" in settings else {}))


def watch(job: Job, work: AnalysisWork) -> None:
    """The job's progress (the app's one job view) and, once R-hat's scores are in, a first look at them; reruns
    the page when the job is done, offers to continue it when it stopped. Stops the rest of the page meanwhile.

    Only the progress reruns every second; the first look is drawn once, by the page rerun its arrival triggers
    (a long trace's heatmap is not rebuilt and resent every second while the job shares the process). Each
    rerun must stay cheap: see ``runner.postScriptGC`` in ``.streamlit/config.toml``."""
    jobs = resources.jobs()
    texts = JobTexts(cancelled="The analysis was cancelled; what it scored is kept.")
    look = work.first_look()

    @st.fragment(run_every=1.0)
    def progress() -> None:
        current = jobs.get(job.id) or job
        if current.status == "done":
            st.rerun()
        show_job(current, "analysis", texts)
        if current.status in FINISHED:
            if st.button("Continue it (what was scored is kept)", key=f"analysis_continue_{job.id}"):
                start(work, jobs)
                st.rerun()
            return
        if look is None and work.first_look_ready():
            st.rerun()

    progress()
    if look is not None:
        segments = look.segmentation.segments
        tips = [{"R_hat": float(look.values.values[s.index]), "sigma": float(look.sigma[s.index])} for s in segments]
        st.caption("First look: R̂ alone (chance of the right answer if the trace stopped here); v̂ is coming…")
        answer = work.trace.cot[segments[-1].char_span[1] :]
        st.html(trace_heatmap([s.text for s in segments], look.sigma, tips, answer_text=answer))
    st.stop()
