"""Dataset: import a file, analyse many traces in the background, look at the aggregates."""

from __future__ import annotations

import streamlit as st

from rredcot_viz.attribution import attributions
from rredcot_viz.estimators import default_estimator, live_estimators
from rredcot_viz.estimators.base import R_HAT_ALONE
from rredcot_viz.segmenters import starting_segmenter
from rredcot_viz.types import content_key
from rredcot_viz.ui import resources
from rredcot_viz.ui.dataset_views import import_panel, run_view, runnable, trace_selection
from rredcot_viz.ui.jobs import job_progress, start_job
from rredcot_viz.ui.method_controls import estimator_picker, segmenter_picker
from rredcot_viz.ui.pickers import model_picker, model_warning
from rredcot_viz.ui.run_views import rollout_runs_panel
from rredcot_viz.workflows.dataset import analyze_dataset, save_run
from rredcot_viz.workflows.estimate import estimate_units, time_line

config = model_picker()
st.title("Dataset")
model_warning(config)
store, jobs = resources.store(), resources.jobs()

with st.expander("Import a dataset", expanded=not store.collections().keys() - {"samples"}):
    import_panel(store)
rollout_runs_panel(store, config)
collection, traces = trace_selection(store)
if not traces:
    st.stop()
segmenter = segmenter_picker("dataset", traces[0], default=starting_segmenter(bool(traces[0].steps)))
estimator, analysis_config = estimator_picker("dataset", default=default_estimator(traces, R_HAT_ALONE))
chosen = runnable(estimator, traces)
others = [name for name in [*attributions.names(), *live_estimators()] if name != estimator.name]
agree = st.multiselect("Also compute, for agreement", others, default=[], key="dataset_agree")
analyzer = resources.analyzer(config, analysis_config)


def run(job):
    progress = lambda done, total: job.progress(done, total, "traces analysed")  # noqa: E731
    records = analyze_dataset(analyzer, chosen, segmenter, estimator, tuple(agree), progress=progress)
    return save_run(store, analyzer.lm.info(), segmenter, estimator, records, f"{collection} x{len(chosen)}")


seconds, how = estimate_units(store, "dataset", len(chosen), "traces")
st.caption(time_line(seconds, how))
if st.button("Analyse in the background", key="dataset_run", disabled=not chosen):
    work = [[t.content_hash for t in chosen], repr(segmenter.config), repr(estimator.config), agree, repr(config)]
    label = f"Analysis of {len(chosen)} traces of {collection}"
    key = content_key("dataset", work)
    start_job("dataset_job", label, run, kind="dataset", key=key, unit="traces", total=len(chosen))


def open_run(job) -> None:
    if job.status == "done":
        st.session_state["dataset_run_id"] = job.result
        st.rerun(scope="app")


job_progress("dataset_job", on_end=open_run, find=lambda: jobs.active("dataset"))
run_view(store, collection)
