"""The Dataset page's parts: importing a file, choosing the traces, the capability check, and a stored run's
aggregate views."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from rredcot_viz.app import screen_path
from rredcot_viz.diagnosis.capability import capability
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import ValueEstimator, estimators, live_estimators
from rredcot_viz.figures import histogram, position_profile
from rredcot_viz.paths import shared_data_dir
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.importers import ImportReport, import_file
from rredcot_viz.traces.importers.readers import DATA_SUFFIXES
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui.settings_form import preset
from rredcot_viz.ui.tables import csv_bytes
from rredcot_viz.ui.upload import import_uploaded, upload_widget
from rredcot_viz.workflows.dataset import (
    dataset_runs,
    export_frame,
    load_run,
    position_points,
    records_frame,
    run_settings,
)
from rredcot_viz.workflows.imports import run_label
from rredcot_viz.workflows.runs import store_import


def import_panel(store: Store) -> None:
    """Import a file from the shared data folder, a file or folder on this machine (a dataset folder, a TRL
    output_dir, a verl rollout dump) or an upload into a collection of its own; an RL run's rollouts are
    stored as a run (the run view below)."""
    root = shared_data_dir()
    shared = sorted(p for p in root.rglob("*") if p.suffix.lower() in DATA_SUFFIXES) if root.is_dir() else []
    choice: Path | None = st.selectbox(
        "A file from the shared data folder",
        [None, *shared],
        key="dataset_shared",
        format_func=lambda p: "(choose)" if p is None else str(p.relative_to(root)),
    )
    typed = st.text_input(
        "or a file or folder on this machine",
        key="dataset_path",
        placeholder="/path/to/trl_output_dir, a verl rollout_data_dir, a datasets folder or a file",
    ).strip()
    left, right = st.columns(2)
    split = left.text_input("Split (a dataset folder with several)", key="dataset_split").strip() or None
    config = right.text_input("Config (a dataset folder with several)", key="dataset_config").strip() or None
    upload = upload_widget("dataset_upload", "or upload a file (JSON, JSONL, parquet, Arrow, CSV, TSV)")
    limit = int(st.number_input("Import at most this many records", 1, 1_000_000, 200, key="dataset_import_limit"))
    chosen = Path(typed).expanduser() if typed else choice
    if not st.button("Import", key="dataset_import", disabled=chosen is None and upload is None):
        return
    try:
        report: ImportReport = (
            import_uploaded(upload, limit=limit)
            if upload is not None
            else import_file(chosen, limit=limit, split=split, config=config)  # type: ignore[arg-type]
        )
    except RredcotError as error:
        st.error(str(error))
        return
    name = upload.name if upload is not None else run_label(str(chosen))
    report.traces = report.traces[:limit]
    stored, run = store_import(store, report, label=name)
    if run is not None:  # the run view below opens on the run just imported (it kept showing the previous one)
        st.session_state["runs_run"] = run.run_id
        for key in ("runs_step", "runs_prompt", "runs_analysis"):
            st.session_state.pop(key, None)
    of_run = f"; run of {run.rollouts} rollouts over {run.steps} steps and {run.prompts} prompts" if run else ""
    st.success(
        f"{name}: {len(report.traces)} traces imported as format {report.format}; {stored}{of_run}; "
        f"{len(report.issues)} problem records"
    )
    for message in [*map(str, report.issues[:5]), *report.warnings]:
        st.warning(message)


def open_in_inspect(trace_hash: str, collection: str, settings: dict) -> None:
    """Inspect the trace live with the segmenter and estimator the run used (not the recorded scores)."""
    st.session_state.update(trace_hash=trace_hash, trace_source="Stored", collection=collection, inspect_source="live")
    if settings.get("segmenter") in segmenters:
        st.session_state["inspect_segmenter"] = settings["segmenter"]
        preset(segmenters.get(settings["segmenter"]).Config, "inspect", settings.get("segmenter_config", {}))
    if settings.get("estimator") in live_estimators():
        st.session_state["inspect_estimator"] = settings["estimator"]
        preset(estimators.get(settings["estimator"]).Config, "inspect", settings.get("estimator_config", {}))
    st.switch_page(screen_path("inspect"))


def trace_selection(store: Store) -> tuple[str, list[Trace]]:
    """A collection, the sources to keep, and how many of its traces to analyse."""
    collections = store.collections()
    collection = st.selectbox(
        "Collection",
        list(collections),
        key="dataset_collection",
        format_func=lambda c: f"{c} ({collections[c]} traces)",
    )
    traces = store.traces(collection)
    sources = sorted({t.source for t in traces})
    chosen = st.multiselect("Sources", sources, default=sources, key=f"dataset_sources_{collection}")
    traces = [t for t in traces if t.source in chosen]
    if len(traces) <= 1:  # a slider from 1 to 1 is an error in Streamlit: one trace (or none) is all there is
        return collection, traces
    count = st.slider("Traces to analyse", 1, len(traces), min(len(traces), 12), key="dataset_count")
    return collection, traces[:count]


def runnable(estimator: ValueEstimator, traces: list[Trace]) -> list[Trace]:
    """The traces ``estimator`` can run on, after saying so (trace fields only: before any model work)."""
    report = capability(estimator, traces)
    if report.complete:
        st.caption(f"Capability check: {report.line()}.")
    else:
        st.warning(
            f"Capability check: {report.line()}. Only those will be analysed; choose another estimator "
            "(own_answer needs only a stated answer) to cover the rest."
        )
    return [traces[i] for i in report.runnable]


def run_view(store: Store, collection: str) -> None:
    """A stored run: mean sigma by relative position, agreement histograms, and its table (rows open in Inspect)."""
    runs = dataset_runs(store)
    if runs.empty:
        st.info("No dataset run yet: choose traces and settings, then 'Analyse in the background'.")
        return
    run_ids = runs["run_id"].tolist()
    current = st.session_state.get("dataset_run_id")
    described = runs.set_index("run_id")[["label", "segmenter", "estimator", "traces"]]
    run_id = st.selectbox(
        "Run",
        run_ids,
        index=run_ids.index(current) if current in run_ids else 0,
        key="dataset_run_pick",
        format_func=lambda r: " · ".join(str(v) for v in described.loc[r]),
    )
    records = load_run(store, run_id)
    columns = st.columns(2)
    for column, (outcome, label) in zip(columns, ((1.0, "correct traces"), (0.0, "failed traces")), strict=True):
        positions, sigmas = position_points(records, outcome)
        if positions:
            column.plotly_chart(
                position_profile(positions, sigmas, title=f"mean σ by relative position, {label}"),
                key=f"dataset_profile_{outcome}",
            )
    for name in sorted({m for r in records for m in r.agreement}):
        values = [r.agreement[name] for r in records if name in r.agreement]
        st.plotly_chart(histogram(values, f"Spearman(σ, {name}) per trace", "Spearman"), key=f"dataset_hist_{name}")
    frame = records_frame(records)
    selection = st.dataframe(
        frame.drop(columns=["hash"]),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="dataset_table",
    )
    rows = selection.selection.rows if selection else []
    if rows and st.button("Open the selected trace in Inspect", key="dataset_open"):
        open_in_inspect(frame.iloc[rows[0]]["hash"], collection, run_settings(store, run_id))
    whole = export_frame(store, run_id)  # with each trace's text, the model and settings, an RL rollout's step
    st.download_button("Download this run (CSV)", csv_bytes(whole), file_name=f"{run_id}.csv", mime="text/csv")
