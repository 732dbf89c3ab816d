"""The Diagnose page's ProcessBench-style evaluation: start one on a seeded sample of a step-labelled file as
a background job (the same workflow as ``eval-diagnosis``), follow it, and read the stored runs."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.verdicts import confusion_matrix, evaluation_runs, load_evaluation
from rredcot_viz.errors import RredcotError
from rredcot_viz.figures import confusion_heatmap
from rredcot_viz.files import write_bytes
from rredcot_viz.jobs import Job
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.paths import data_dir, shared_data_dir
from rredcot_viz.segmenters import segmenters
from rredcot_viz.settings import SettingSpec
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import JobTexts, job_progress, start_job
from rredcot_viz.ui.method_controls import method_picker, method_settings, summary
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.ui.upload import upload_widget
from rredcot_viz.workflows.diagnose import (
    EvaluationRecord,
    EvaluationRequest,
    RecordSelection,
    plan_evaluation,
)
from rredcot_viz.workflows.estimate import estimate_units, time_line

DEFAULT_DETECTORS = ["min_sigma", "value_drop", "step_verifier"]  # cheap: one analysis and one pass per trace
UPLOAD = "upload a file"
APP_SELECTION = RecordSelection(sample=20, balanced=True)  # the page starts small: a job, not a whole file


def labelled_files() -> dict[str, Path]:
    """Step-labelled files found in the shared data folder, by a name relative to it."""
    root = shared_data_dir()
    found = sorted((root / "processbench").glob("*.json")) if (root / "processbench").is_dir() else []
    return {str(path.relative_to(root)): path for path in found}


def _chosen_file() -> tuple[Path, str, dict] | None:
    """The file to evaluate, its name as the user knows it, and how to read it (an upload's options)."""
    files = labelled_files()
    choice = st.selectbox("Step-labelled file", [*files, UPLOAD], key="eval_file")
    if choice != UPLOAD:
        return files[choice], choice, {}
    upload = upload_widget("eval_upload", "ProcessBench-format JSON / JSONL")
    if upload is None:
        return None
    folder = data_dir() / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / Path(upload.name).name  # the user's name, without any folder they sent
    write_bytes(path, upload.data)
    read = upload.options
    options = {"format": read.format, "field_map": read.field_map, "encoding": read.encoding}
    return path, upload.name, {**options, "label_base": read.label_base}


def _segmenter_picker(spec: SettingSpec, key: str) -> str:
    """The segmenter menu with each segmenter's summary in its help."""
    return method_picker("Segmenter", segmenters, segmenters.names(), key, APP_SELECTION.segmenter)


def start_form(config: ModelConfig) -> None:
    names = st.multiselect(
        "Detectors",
        detectors.names(),
        default=DEFAULT_DETECTORS,
        key="eval_detectors",
        help="\n\n".join(f"**{n}**: {summary(detectors, n)}" for n in detectors.names()),
    )
    with st.form("eval_form", enter_to_submit=False):
        chosen = _chosen_file()
        selection = settings_form(
            RecordSelection, "eval", initial=APP_SELECTION, columns=3, custom={"segmenter": _segmenter_picker}
        )
        options = method_settings({name: detectors.get(name).Config for name in names}, "eval")
        submitted = st.form_submit_button("Evaluate in the background")
    records = selection.get("sample")
    if records:
        seconds, how = estimate_units(resources.store(), "diagnosis", records * len(names), "record × detector runs")
        st.caption(time_line(seconds, how))
    if not submitted:
        return
    if chosen is None or not names:
        st.error("Choose a file (or upload one) and at least one detector.")
        return
    path, shown, read = chosen
    try:  # the capability check reads trace fields only: it answers before the model is touched
        request = EvaluationRequest(path, options, selection=RecordSelection(**selection), **read)
        plan = plan_evaluation(request)
    except RredcotError as error:
        st.error(str(error))
        return
    st.session_state["eval_capabilities"] = [*plan.notes, *(c.line() for c in plan.capabilities)]
    lm, store, sampler = resources.model(config), resources.store(), resources.sampler(config)

    def run(job: Job) -> str:
        def report(name: str, done: int, total: int) -> None:
            job.progress(names.index(name) * total + done, total * len(names), f"{name}: {done}/{total} traces")

        return EvaluationRecord(store, lm, request, plan, sampler).run(report).run_id  # each detector stored as it ends

    label = f"Evaluation of {', '.join(names)} on {shown}"
    total = len(plan.traces) * len(names)
    key = "diagnosis:" + json.dumps([str(path), shown, names, options, selection, read], sort_keys=True, default=str)
    start_job("eval_job", label, run, kind="diagnosis", key=key, unit="traces", total=total)


def _open_run(job: Job) -> None:
    if job.status == "done":
        st.session_state["diagnose_run"] = job.result
        st.rerun(scope="app")


def stored_runs() -> None:
    runs = evaluation_runs(resources.store())
    if runs.empty:
        st.caption("No evaluation stored yet: start one above, or run `python -m rredcot_viz eval-diagnosis`.")
        return
    splits = runs.set_index("run_id")["split"]
    if st.session_state.get("diagnose_run") not in splits.index:
        st.session_state.pop("diagnose_run", None)
    run_id = st.selectbox("Run", splits.index.tolist(), key="diagnose_run", format_func=lambda r: f"{splits[r]} · {r}")
    table, details = load_evaluation(resources.store(), run_id)
    st.dataframe(table, hide_index=True, key="diagnose_eval_table")
    st.caption("F1 is n/a when the sample has no erroneous or no correct traces; the last rows are trivial baselines.")
    for note in (note for detail in details.values() for note in detail.get("notes", [])):
        st.warning(note)
    detector = st.selectbox("Confusion view of", list(details), key="diagnose_confusion_detector")
    detail = details[detector]
    st.plotly_chart(
        confusion_heatmap(
            confusion_matrix(detail["predictions"], detail["labels"], detail["n_steps"]),
            f"{detector}: predicted vs labelled first error",
        ),
        key="diagnose_confusion",
    )


def evaluation_panel(config: ModelConfig) -> None:
    st.subheader("ProcessBench evaluation")
    with st.expander("Start an evaluation", expanded=False):
        start_form(config)
    lines = st.session_state.get("eval_capabilities")
    if lines:
        st.info("Capability check (before any model work):\n\n" + "\n".join(f"- {line}" for line in lines))
    st.caption(
        "Reference-free modes: with no reference answer the value detectors read P(the trace's own answer) "
        "(`own_answer`), `loo` targets the own answer, and `mc` rewards agreement with the majority answer of "
        "continuations sampled from the question (self-consistency); `step_verifier` asks the model about each "
        "step and needs nothing but the steps."
    )
    jobs = resources.jobs()
    job_progress(
        "eval_job", JobTexts(done="Evaluation stored."), on_end=_open_run, find=lambda: jobs.active("diagnosis")
    )
    stored_runs()
