"""The value probe on the Compare page (docs/guide.md, "A value probe"): what the loaded model's probe was fitted on
and how it did on held-out problems, or, when the model has none at its precision, one line saying how to fit one
and a panel that fits one as a background job (Monte Carlo labels drawn and stored, then the grouped fit)."""

from __future__ import annotations

from dataclasses import asdict

import streamlit as st

from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators.montecarlo import PRESETS, MonteCarloConfig
from rredcot_viz.estimators.probe import ProbeEstimator
from rredcot_viz.estimators.value_probe import find_probe, missing_probe_message, precision_of
from rredcot_viz.jobs import Job
from rredcot_viz.paths import SAMPLE_TRACES_DIR
from rredcot_viz.segmenters import Segmenter
from rredcot_viz.traces.importers import import_file
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import JobTexts, job_progress, start_job
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.workflows.probe import fit_from_traces

JOB_KEY = "probe_job"
NAME = ProbeEstimator.name


def probe_panel(analyzer: Analyzer, methods: list[str]) -> list[str]:
    """Say whether the loaded model has a value probe; without one, say how to fit one and leave ``probe`` out of
    the methods run (with a line saying why). Returns the methods to run."""
    lm = analyzer.lm
    probe = find_probe(lm.fingerprint, precision_of(lm))
    if probe is not None:
        held = probe.metrics
        figures = (
            f"; on {held['heldout_problems']:g} held-out problems Brier {held['heldout_brier']:.3f}, MC's segment "
            f"pairs ordered alike {held['heldout_pairs']:.0%}"
            if "heldout_brier" in held
            else ""
        )
        st.caption(f"Value probe for this model ({probe.precision}): {probe.describe()}{figures}. Pick **{NAME}** in "
                   "Methods; it costs one forward pass and no sampled token.")  # fmt: skip
        return methods
    st.caption(missing_probe_message(lm.name, precision_of(lm)) + ": “Fit a value probe for this model”, below.")
    if NAME in methods:
        st.info(f"**{NAME}** joins the comparison once a value probe is fitted for this model (below).")
    return [m for m in methods if m != NAME]


def probe_fit_panel(analyzer: Analyzer, segmenter: Segmenter) -> None:
    """The fit panel where the loaded model has no probe at its precision, after the page's own sampling panels
    (whose settings come first on the page: the probe's Monte Carlo settings share their labels)."""
    lm = analyzer.lm
    if find_probe(lm.fingerprint, precision_of(lm)) is not None:
        return
    with st.expander("Fit a value probe for this model (a background job)"):
        fit_panel(analyzer, segmenter)


def fit_panel(analyzer: Analyzer, segmenter: Segmenter) -> None:
    """Which traces to label, the Monte Carlo settings (generated from its config), and the job."""
    files = sorted(path.name for path in SAMPLE_TRACES_DIR.glob("*.jsonl"))
    chosen = st.multiselect("Traces to label (shipped sample sets)", files, files, key="probe_files")
    st.caption("Each state of each trace is labelled by the model's own Monte Carlo success rate there; problems "
               "are split into fit and held-out before fitting, and layer and L2 are chosen by cross-validation "
               "grouped by problem on the fit split.")  # fmt: skip
    options = settings_form(MonteCarloConfig, "probe_mc", initial=PRESETS["cpu_quick"], more="More Monte Carlo "
                            "settings")  # fmt: skip
    lm = analyzer.lm
    key = f"probe:{lm.fingerprint}:{precision_of(lm)}:{sorted(chosen)}:{segmenter.config!r}:{sorted(options.items())}"

    def run(job: Job) -> None:
        traces = [t for name in chosen for t in import_file(str(SAMPLE_TRACES_DIR / name)).traces]
        mc = asdict(PRESETS["cpu_quick"]) | options
        fit_from_traces(analyzer, traces, segmenter, mc, progress=lambda done, total, what: job.progress(done,
                        total, what))  # fmt: skip

    if st.button("Fit a value probe", key="probe_fit", disabled=not chosen):
        start_job(JOB_KEY, f"value probe for {lm.name}", run, kind="probe_fit", key=key, unit="traces")

    def rerun_when_done(job: Job) -> None:
        if job.status == "done":
            st.rerun(scope="app")

    texts = JobTexts(cancelled="Cancelled; the rollouts drawn so far are kept.", done="Value probe fitted.")
    found = resources.jobs().latest(key)
    st.session_state.setdefault(JOB_KEY, found.id if found is not None else "")
    job_progress(JOB_KEY, texts, on_end=rerun_when_done, idle="Rollouts are stored: a refit reuses them.")
