"""The Compare page's parts: which methods, their generated settings, each sampling estimator (Monte Carlo) as a
background job from its own panel, the cost table and how far to trust the comparison with Monte Carlo."""

from __future__ import annotations

import inspect
from typing import Any

import pandas as pd
import streamlit as st

from rredcot_viz.attribution import attributions
from rredcot_viz.attribution.trust import Trust
from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators import EstimatorConfig, estimators, sampling_estimators
from rredcot_viz.jobs import Job
from rredcot_viz.segmenters import Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import JobTexts, job_progress, start_job
from rredcot_viz.ui.method_controls import build, method_settings, summary
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.ui.state import keep, kept
from rredcot_viz.workflows.compare import Comparison, run_sampling
from rredcot_viz.workflows.estimate import CHEAP_ENOUGH_S, NOT_MEASURED, estimate_sampling

DEFAULT_METRIC = inspect.signature(Comparison.matrix).parameters["metric"].default


def method_choice(trace: Trace, segmenter: Segmenter) -> list[str]:
    """The methods to compare: every estimator and attribution (those that value only the trace's own steps, such
    as published values, when the segmenter follows them and the trace has what they need); the choice is kept
    when the user visits another page and comes back."""

    def offered(name: str) -> bool:
        if name not in estimators or not estimators.get(name).steps_only:
            return True
        return segmenter.follows_steps and not estimators.get(name)().missing(trace)

    names = [n for n in [*estimators.names(), *attributions.names()] if offered(n)]
    default = [n for n in ("rredcot", "loo", "grad_x_input", "published_mc") if n in names]
    help_text = "\n\n".join(f"**{n}**: {summary(estimators if n in estimators else attributions, n)}" for n in names)
    default = kept("compare_methods", default, lambda chosen: [n for n in chosen if n in names])
    if "compare_methods" in st.session_state:  # set by a link (or this widget): Streamlit refuses a default too
        st.session_state["compare_methods"] = [n for n in st.session_state["compare_methods"] if n in names]
        default = None
    return keep("compare_methods", st.multiselect("Methods", names, default, key="compare_methods", help=help_text))


def sampled(methods: list[str]) -> list[str]:
    """The chosen estimators that draw rollouts: each runs as a background job from its own panel."""
    return [n for n in methods if n in sampling_estimators()]


def method_options(methods: list[str]) -> dict[str, dict[str, Any]]:
    """The generated settings of every chosen method but the sampling ones (which have their own panel)."""
    own_panel = sampled(methods)
    types = {n: (estimators if n in estimators else attributions).get(n).Config for n in methods if n not in own_panel}
    return method_settings(types, "compare")


def _states(analyzer: Analyzer, trace: Trace, segmenter: Segmenter) -> int | None:
    """The number of states Monte Carlo samples from (K), when known without a model call."""
    if analyzer.context(trace).has_stats:
        return analyzer.segment(trace, segmenter).k
    return getattr(segmenter.config, "k", None)


def _start(analyzer: Analyzer, name: str, states: int | None) -> tuple[EstimatorConfig | None, str | None]:
    """The settings a sampling estimator's panel starts from (its first ``app_starts``, or the next where that
    would take over ~2 minutes here), and why, where they are cut down for this machine."""
    estimator_type = estimators.get(name)
    if not estimator_type.app_starts:
        return None, None
    full, *cheaper = estimator_type.app_starts
    if analyzer.lm.device.startswith("cuda") or not cheaper:
        return full, None
    first = estimator_type(full)
    guess = estimate_sampling(analyzer.lm, first.rollout_tokens(states or 1), resources.store())
    if guess is not None and states is not None and guess.seconds <= CHEAP_ENOUGH_S:
        return full, None
    started = f"Started at {estimator_type(cheaper[0]).budget()}"
    if guess is None or states is None:
        return cheaper[0], (
            f"{started}: no sampling speed is measured on this machine yet, and on 2 CPU cores {first.budget()} "
            "takes minutes per trace."
        )
    return cheaper[0], f"{started}: {first.budget()} would take {guess.line()}."


def sampling_panels(analyzer: Analyzer, trace: Trace, segmenter: Segmenter, methods: list[str]) -> dict[str, Any]:
    """A panel for every estimator that draws rollouts (``samples``), each with its own generated settings and
    background job; the options of those chosen in ``methods`` whose rollouts for their settings are drawn."""
    drawn = {}
    for name in sampling_estimators():
        options = sampling_panel(analyzer, trace, segmenter, name, name in methods)
        if options is not None:
            drawn[name] = options
    return drawn


def sampling_panel(
    analyzer: Analyzer, trace: Trace, segmenter: Segmenter, name: str, wanted: bool
) -> dict[str, Any] | None:
    """One sampling estimator's settings (generated from its ``Config``, keys ``{name}_<setting>``) and its
    background job (any tab finds the job for the same settings; asking again joins it), with an estimate of its
    time before it starts; its options once its rollouts for these settings are drawn, else None."""
    estimator_type = estimators.get(name)
    title = estimator_type.title or name
    st.subheader(f"{title} rollouts")
    states = _states(analyzer, trace, segmenter)
    if f"{name}_start" not in st.session_state:  # once a session: a start that moved would orphan a run's results
        st.session_state[f"{name}_start"] = _start(analyzer, name, states)
    start, why = st.session_state[f"{name}_start"]
    if why:
        st.caption(why)
    options = settings_form(estimator_type.Config, name, initial=start, more=f"More {title} settings")
    estimator = build(estimator_type, options)
    jobs = resources.jobs()
    settings_key = f"{name}:{trace.content_hash}:{segmenter.config!r}:{estimator.config!r}"
    found = jobs.latest(settings_key)
    job_key = f"{name}_job"
    st.session_state[job_key] = found.id if found is not None else ""

    def run(job: Job) -> None:
        """Counts states from the start: states already sampled (stored rollouts) count as done."""
        job.progress(0, 0, "scoring the trace to place its states")
        count = analyzer.segment(trace, segmenter).k
        job.progress(0, count, "sampling rollouts")
        report = lambda done, todo: job.progress(count - todo + done, count, "sampling rollouts")  # noqa: E731
        run_sampling(analyzer, trace, segmenter, name, options, progress=report)

    left, right = st.columns([1, 3])
    clicked = left.button(f"Run {title}", key=f"{name}_run", disabled=not wanted)
    if not wanted:
        right.caption(f"Add **{name}** to the methods above to run it.")
    else:
        guess = estimate_sampling(analyzer.lm, estimator.rollout_tokens(states or 1), resources.store())
        per = f" for its {states} states" if states else " per state"
        right.caption(f"Time here{per}: {guess.line()}." if guess else NOT_MEASURED)
    if clicked:
        start_job(job_key, f"{title} on “{trace.display_name}”", run, kind=name, key=settings_key, unit="states")

    def rerun_when_done(job: Job) -> None:
        if job.status == "done":
            st.rerun(scope="app")

    texts = JobTexts(
        cancelled="Cancelled; the rollouts drawn so far are kept.", done=f"{title} done for these settings."
    )
    idle = "Rollouts are stored: asking for more reuses the ones already drawn."
    job_progress(job_key, texts, on_end=rerun_when_done, idle=idle)
    job = jobs.get(st.session_state[job_key])
    if job is not None and job.status == "done":
        return options
    if wanted:
        st.info(f"{title} joins the comparison once its rollouts for these settings are drawn (Run {title}).")
    return None


def cost_frame(comparison: Comparison) -> pd.DataFrame:
    """What each method cost when it was computed (``cached`` when it comes from the cache now), with its
    checks (efficiency gap, completeness); the notes are listed in full by ``cost_notes``."""
    return pd.DataFrame(
        [
            {
                "method": name,
                "seconds": round(r.cost.seconds, 2),
                "tokens in": r.cost.tokens_processed,
                "tokens generated": r.cost.tokens_generated,
                "source": r.cost.source(r.cached, r.computed_at, r.computed_by),
                "checks": "; ".join(f"{k}={v:.3g}" for k, v in r.checks.items()),
            }
            for name, r in comparison.methods.items()
        ]
    )


def cost_notes(comparison: Comparison) -> list[str]:
    """Every method's notes (caveats such as truncated rollouts), whole."""
    return [f"**{name}**: {note}" for name, r in comparison.methods.items() for note in r.notes]


def trust_panel(found: Trust | None, labels: dict[str, str] | None = None) -> None:
    """How far to trust this trace's comparison with Monte Carlo: each method's agreement with MC beside MC's
    with itself (``attribution.trust``); nothing when MC has not been drawn."""
    if found is None:
        return
    st.markdown("**How far to trust this comparison** (segment pairs before the last segment, whose credit the "
                "outcome decides)")  # fmt: skip
    st.markdown("\n".join(f"- {line}" for line in found.sentences(labels)))
