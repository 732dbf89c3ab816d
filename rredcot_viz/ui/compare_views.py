"""The Compare page's parts: which methods, their generated settings, Monte Carlo as a background job, and the
cost table."""

from __future__ import annotations

import inspect
from typing import Any

import pandas as pd
import streamlit as st

from rredcot_viz.attribution import attributions
from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.montecarlo import PRESETS, MonteCarloConfig
from rredcot_viz.jobs import Job
from rredcot_viz.segmenters import Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import JobTexts, job_progress
from rredcot_viz.ui.method_controls import build, method_settings, summary
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.workflows.compare import Comparison

DEFAULT_METRIC = inspect.signature(Comparison.matrix).parameters["metric"].default
MC_START = PRESETS["cpu_quick"]  # small models on a CPU: 8 rollouts of at most 160 tokens per state


def method_choice(trace: Trace, segmenter: Segmenter) -> list[str]:
    """The methods to compare: every estimator and attribution (published values only on the trace's own steps)."""
    published = bool(trace.step_values) and segmenter.name == "given"
    names = [n for n in [*estimators.names(), *attributions.names()] if n != "published_mc" or published]
    default = [n for n in ("rredcot", "loo", "grad_x_input", "published_mc") if n in names]
    help_text = "\n\n".join(f"**{n}**: {summary(estimators if n in estimators else attributions, n)}" for n in names)
    return st.multiselect("Methods", names, default=default, key="compare_methods", help=help_text)


def method_options(methods: list[str]) -> dict[str, dict[str, Any]]:
    """The generated settings of every chosen method but Monte Carlo (which has its own panel)."""
    types = {n: (estimators if n in estimators else attributions).get(n).Config for n in methods if n != "mc"}
    return method_settings(types, "compare")


def monte_carlo_panel(analyzer: Analyzer, trace: Trace, segmenter: Segmenter, wanted: bool) -> dict[str, Any] | None:
    """Monte Carlo's settings and its background job (any tab finds the job for the same settings); its options
    once its rollouts for these settings are drawn, else None."""
    st.subheader("Monte Carlo rollouts")
    options = settings_form(MonteCarloConfig, "mc", initial=MC_START, more="More Monte Carlo settings")
    mc = build(estimators.get("mc"), options)
    jobs = resources.jobs()
    settings_key = f"mc:{trace.content_hash}:{segmenter.config!r}:{mc.config!r}"
    found = jobs.latest(settings_key)
    st.session_state["mc_job"] = found.id if found is not None else ""

    def run(job: Job) -> None:
        """Counts states from the start: states already sampled (stored rollouts) count as done."""
        job.progress(0, 0, "scoring the trace to place its states")
        states = analyzer.segment(trace, segmenter).k
        job.progress(0, states, "sampling the first state")
        report = lambda done, todo: job.progress(states - todo + done, states, "states sampled")  # noqa: E731
        analyzer.analyze(trace, segmenter, mc, progress=report)

    help_text = "Samples in the background" if wanted else "Add 'mc' to the methods first"
    if st.button("Run Monte Carlo", key="mc_run", disabled=not wanted, help=help_text):
        job = jobs.submit(f"MC for {trace.short_id}", run, kind="mc", key=settings_key, unit="states")
        st.session_state["mc_job"] = job.id

    def rerun_when_done(job: Job) -> None:
        if job.status == "done":
            st.rerun(scope="app")

    texts = JobTexts(
        cancelled="Cancelled; the rollouts drawn so far are kept.", done="Monte Carlo done for these settings."
    )
    idle = "Rollouts are stored: asking for more reuses the ones already drawn."
    job_progress("mc_job", texts, on_end=rerun_when_done, idle=idle)
    job = jobs.get(st.session_state["mc_job"])
    if job is not None and job.status == "done":
        return options
    if wanted:
        st.info("Monte Carlo joins the comparison once its rollouts for these settings are drawn (Run Monte Carlo).")
    return None


def cost_frame(comparison: Comparison) -> pd.DataFrame:
    """What each method cost, with its checks (efficiency gap, completeness) and notes."""
    return pd.DataFrame(
        [
            {
                "method": name,
                "seconds": round(r.cost.seconds, 2),
                "tokens in": r.cost.tokens_processed,
                "tokens generated": r.cost.tokens_generated,
                "notes": "; ".join([*(f"{k}={v:.3g}" for k, v in r.checks.items()), *r.notes]),
            }
            for name, r in comparison.methods.items()
        ]
    )
