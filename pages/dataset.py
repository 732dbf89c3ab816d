"""Dataset: import a file, analyse many traces in the background, look at the aggregates."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from rredcot_viz.diagnosis.capability import capability
from rredcot_viz.errors import RredcotError
from rredcot_viz.figures import histogram, position_profile
from rredcot_viz.paths import shared_data_dir
from rredcot_viz.traces.importers import import_file
from rredcot_viz.ui import resources, widgets
from rredcot_viz.ui.upload import import_uploaded, upload_widget
from rredcot_viz.workflows.dataset import (
    analyze_dataset,
    dataset_runs,
    load_run,
    position_points,
    records_frame,
    save_run,
)

config = widgets.model_picker()
st.title("Dataset")
widgets.model_warning(config)
store = resources.store()
jobs = resources.jobs()

with st.expander("Import a dataset", expanded=not store.collections().keys() - {"samples"}):
    shared = sorted(p for p in shared_data_dir().rglob("*.json*")) if shared_data_dir().is_dir() else []
    choice = st.selectbox(
        "A file from the shared data folder",
        [None, *shared],
        key="dataset_shared",
        format_func=lambda p: "(choose)" if p is None else str(p.relative_to(shared_data_dir())),
    )
    upload = upload_widget("dataset_upload", "or upload JSON / JSONL")
    limit = st.number_input("Import at most this many records", 1, 100_000, 200, key="dataset_import_limit")
    if st.button("Import", key="dataset_import", disabled=choice is None and upload is None):
        try:
            if upload is not None:
                report = import_uploaded(upload, limit=int(limit))
                name = upload.name
            else:
                report = import_file(choice, limit=int(limit))
                name = choice.name
            store.put_traces(report.traces[: int(limit)], f"dataset:{name}")
            st.success(
                f"{name}: {min(len(report.traces), int(limit))} traces imported as format {report.format}; "
                f"{len(report.issues)} problem records"
            )
            for issue in report.issues[:5]:
                st.warning(str(issue))
        except RredcotError as error:
            st.error(str(error))

collections = store.collections()
collection = st.selectbox(
    "Collection", list(collections), key="dataset_collection", format_func=lambda c: f"{c} ({collections[c]} traces)"
)
traces = store.traces(collection)
sources = sorted({t.source for t in traces})
chosen_sources = st.multiselect("Sources", sources, default=sources, key=f"dataset_sources_{collection}")
traces = [t for t in traces if t.source in chosen_sources]
count = st.slider("Traces to analyse", 1, max(len(traces), 1), min(len(traces), 12), key="dataset_count")
trace = traces[0] if traces else None
if trace is None:
    st.stop()
segmenter = widgets.segmentation_controls("dataset", trace, default="given" if trace.steps else "hybrid")
estimator, analysis_config = widgets.estimator_controls(
    "dataset", names=["answer_only", "rredcot", "own_answer", "uniform"]
)
# the capability check reads trace fields only: what cannot run is said now, not after minutes of model work
report = capability(estimator, traces[:count])
runnable = [traces[i] for i in report.runnable]
if report.complete:
    st.caption(f"Capability check: {report.line()}.")
else:
    st.warning(
        f"Capability check: {report.line()}. Only those will be analysed; choose another estimator "
        "(own_answer needs only an outcome and a stated answer) to cover the rest."
    )
agree = st.multiselect(
    "Also compute, for agreement", ["loo", "grad_x_input", "uniform", "answer_only"], default=[], key="dataset_agree"
)
analyzer = resources.analyzer(config, replace(analysis_config, boundaries="segmenter"))


def run(job):
    records = analyze_dataset(
        analyzer,
        runnable,
        segmenter,
        estimator,
        tuple(agree),
        progress=lambda done, total: job.progress(done, total, "traces analysed"),
    )
    info = analyzer.lm.info()
    return save_run(store, info, segmenter, estimator, records, f"{collection} x{len(runnable)}")


if st.button("Analyse in the background", key="dataset_run", disabled=not runnable):
    st.session_state["dataset_job"] = jobs.submit(f"{len(runnable)} traces of {collection}", run).id


@st.fragment(run_every=1.0)
def job_status():
    job = jobs.get(st.session_state.get("dataset_job", ""))
    if job is None:
        return
    ended = widgets.job_status(job, "dataset", f"{job.label}: {job.done}/{job.total} ({job.elapsed:.0f} s)")
    if ended and job.status == "done":
        st.session_state["dataset_run_id"] = job.result
        st.rerun(scope="app")


job_status()

runs = dataset_runs(store)
if runs.empty:
    st.info("No dataset run yet: choose traces and settings, then 'Analyse in the background'.")
    st.stop()
run_ids = runs["run_id"].tolist()
current = st.session_state.get("dataset_run_id")
run_id = st.selectbox(
    "Run",
    run_ids,
    index=run_ids.index(current) if current in run_ids else 0,
    key="dataset_run_pick",
    format_func=lambda r: " · ".join(
        str(v) for v in runs.set_index("run_id").loc[r, ["label", "segmenter", "estimator", "traces"]]
    ),
)
records = load_run(store, run_id)
left, right = st.columns(2)
for column, (outcome, label) in zip((left, right), ((1.0, "correct traces"), (0.0, "failed traces")), strict=True):
    positions, sigmas = position_points(records, outcome)
    if positions:
        column.plotly_chart(
            position_profile(positions, sigmas, title=f"mean σ by relative position, {label}"),
            key=f"dataset_profile_{outcome}",
        )
agreement_names = sorted({m for r in records for m in r.agreement})
for name in agreement_names:
    st.plotly_chart(
        histogram(
            [r.agreement[name] for r in records if name in r.agreement], f"Spearman(σ, {name}) per trace", "Spearman"
        ),
        key=f"dataset_hist_{name}",
    )
frame = records_frame(records)
selection = st.dataframe(
    frame.drop(columns=["hash"]), hide_index=True, on_select="rerun", selection_mode="single-row", key="dataset_table"
)
rows = selection.selection.rows if selection else []
if rows and st.button("Open the selected trace in Inspect", key="dataset_open"):
    st.session_state.update(trace_hash=frame.iloc[rows[0]]["hash"], trace_source="Stored", collection=collection)
    st.switch_page("pages/inspect.py")
st.download_button(
    "Download this run (CSV)", frame.to_csv(index=False).encode(), file_name=f"{run_id}.csv", mime="text/csv"
)
