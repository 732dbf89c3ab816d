"""The Train page's parts: the generated new-run form, resuming, live curves, the step inspector, and the
before/after comparison of a trained adapter."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.figures import advantage_rows, training_curves, value_curves
from rredcot_viz.figures.training import METRIC_TITLES
from rredcot_viz.jobs import Job
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.training import TrainConfig, latest_checkpoint, method_config_type, methods, quick
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import JobTexts, StreamlitProgress, job_progress
from rredcot_viz.ui.method_controls import method_picker
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.workflows.train import checkpoint_root, new_run_id, run_training, stored_run, value_shift


def start_run(model_config: ModelConfig, config: TrainConfig, run_id: str | None = None, resume: bool = False) -> None:
    """A training run as a background job (one model job at a time on this machine)."""
    running = resources.jobs().get(st.session_state.get("train_job", ""))
    if running is not None and running.active:
        st.warning("A run is in progress; stop it first (one model job at a time on this machine).")
        return
    base, store = resources.model(model_config), resources.store()
    run_id = run_id or new_run_id(config)

    def work(job: Job) -> object:
        progress = lambda done, total: job.progress(done, total, "steps")  # noqa: E731
        return run_training(base, config, store, run_id=run_id, resume=resume, progress=progress)

    st.session_state["train_job"] = resources.jobs().submit(f"{config.method} run {run_id}", work).id
    st.session_state["train_runs"] = [run_id, *st.session_state.get("train_runs", [])][:4]
    st.session_state["train_job_run"] = run_id


def new_run_form(model_config: ModelConfig) -> None:
    """The chosen method's settings, generated from its config and started from the quick preset."""
    method = method_picker("Method", methods, methods.names(), "train_method", "rredcot")
    with st.expander("New run", expanded=True), st.form("train_form"):
        values = settings_form(method_config_type(method), "train", initial=quick(method), exclude=("method",))
        submitted = st.form_submit_button("Start run", type="primary")
    if submitted:
        try:
            start_run(model_config, quick(method, **values))
        except RredcotError as error:
            st.error(str(error))


def resume_control(model_config: ModelConfig, store: Store, runs: pd.DataFrame) -> None:
    """Resume a stopped run from its last checkpoint."""
    job = resources.jobs().get(st.session_state.get("train_job", ""))
    in_progress = st.session_state.get("train_job_run") if job is not None and job.active else None
    unfinished = runs[runs["status"] != "done"]["run_id"].tolist() if len(runs) else []
    resumable = [r for r in unfinished if r != in_progress and latest_checkpoint(checkpoint_root(r)) is not None]
    if not resumable:
        return
    left, right = st.columns([3, 1])
    resume_id = left.selectbox("Resume a stopped run from its last checkpoint", resumable, key="train_resume")
    if right.button("Resume", key="train_resume_button"):
        try:
            start_run(model_config, stored_run(store, resume_id)[0], resume_id, resume=True)
        except RredcotError as error:
            st.error(str(error))


def live_view(store: Store, plotted: list[str], metric_names: list[str], labels: dict[str, str]) -> None:
    """The run's progress and the chosen runs' curves, redrawn from the store every two seconds while it runs."""

    def curves(job: Job | None) -> None:
        running = [st.session_state.get("train_job_run")] if job is not None and job.active else []
        shown = list(dict.fromkeys([*plotted, *running]))  # a run started this render is not in the list yet
        if shown and metric_names:
            st.plotly_chart(training_curves(store.train_metrics(shown), metric_names, labels), key="train_curves")
        elif not labels:
            st.info("No training runs yet: start one above (a 30-step run takes about 10 minutes on a CPU).")

    texts = JobTexts(
        cancel="Stop",
        cancel_note="Stopping after the current step; its state is saved so the run can be resumed.",
        cancelled="Stopped; resume it from its last checkpoint below.",
        done="The run finished.",
    )
    job_progress("train_job", texts, on_end=lambda job: st.rerun(), body=curves, every=2.0)


def step_inspector(store: Store, known: list[str], labels: dict[str, str]) -> None:
    """One step's rollouts as rows of segments shaded by the advantage each got, and the step's numbers."""
    if st.session_state.get("train_inspect_run") not in known:
        st.session_state.pop("train_inspect_run", None)
    run = st.selectbox("Run", known, key="train_inspect_run", format_func=labels.get)
    steps = store.train_rollout_steps(run)
    if not steps:
        st.info("This run has not kept any rollouts yet.")
        return
    step = st.select_slider("Step", steps, value=steps[-1], key="train_step")
    records = store.train_rollouts(run, step)
    metrics = store.train_metrics([run])
    row = metrics[metrics["step"] == step]
    for column, name in zip(st.columns(4), ["reward_mean", "advantage_abs_mean", "loss", "seconds"], strict=True):
        if len(row) and name in row and pd.notna(row[name].iloc[0]):
            column.metric(METRIC_TITLES.get(name, name), f"{float(row[name].iloc[0]):.3f}")
    notes = step_notes(row.iloc[0].to_dict() if len(row) else {}, stored_run(store, run)[0])
    if notes:
        st.caption(" · ".join(notes))
    st.html(advantage_rows(records))
    table = [
        {
            "group": r.get("group"),
            "reward": r.get("reward"),
            "tokens": r.get("tokens"),
            "prefix tokens": r.get("suffix_start", 0),
            "segment advantages": ", ".join(f"{a:+.2f}" for a in r.get("segment_advantages") or []),
        }
        for r in records
    ]
    st.dataframe(pd.DataFrame(table), hide_index=True, key="train_step_table")


def step_notes(metrics: dict, config: TrainConfig) -> list[str]:
    """What the step's numbers say about switches a method made: which estimator credited its groups, where
    its resets landed, how often SRPO's localiser reply parsed and what the others got instead."""
    present = {k: v for k, v in metrics.items() if pd.notna(v)}
    notes = []
    counts = {k.removeprefix("credit_groups_"): int(v) for k, v in present.items() if k.startswith("credit_groups_")}
    if counts:
        notes.append(
            "groups credited by " + ", ".join(f"{name} {n}" for name, n in counts.items())
            + " (answer_only: a problem without a reference solution, R-hat alone)"
        )  # fmt: skip
    if "reset_empty_prefix_share" in present:
        notes.append(
            f"{int(present['reset_groups'])} reset group(s): {present['reset_empty_prefix_share']:.0%} from an "
            f"empty prefix (the question alone), {present['reset_prefix_fraction']:.0%} of the parent kept on average"
        )
    if "localiser_parse_rate" in present:
        fallback = getattr(config, "localizer_fallback", "first")
        rule = "a uniformly random step" if fallback == "random" else "step 1 (the empty prefix)"
        notes.append(
            f"localiser replies whose last box named a step: {present['localiser_parse_rate']:.0%}; the rest "
            f"are read from their last 'Step N', and {present.get('localiser_fallback_share', 0.0):.0%} that name "
            f"none get {rule}"
        )
    return notes


def before_after(model_config: ModelConfig, known: list[str], labels: dict[str, str]) -> None:
    """A trace's RREDCoT value curve under the base model and under a run's last checkpoint, and the shift."""
    finished = [r for r in known if latest_checkpoint(checkpoint_root(r)) is not None]
    if not finished:
        st.info("No run has a checkpoint yet.")
        return
    left, right = st.columns(2)
    run = left.selectbox("Trained run", finished, key="train_compare_run", format_func=labels.get)
    candidates = resources.held_out_traces(model_config, run) + resources.samples()
    trace = right.selectbox(
        "Trace", candidates, format_func=lambda t: f"{t.trace_id or t.short_id} · {t.question[:60]}",
        key="train_compare_trace",
    )  # fmt: skip
    if st.button("Compare base and trained", key="train_compare"):
        st.session_state["train_compare_key"] = (run, trace.content_hash)
    if st.session_state.get("train_compare_key") != (run, trace.content_hash):
        return
    try:
        checkpoint = latest_checkpoint(checkpoint_root(run)).name  # type: ignore[union-attr]
        trained, trained_step = resources.trained_analyzer(model_config, run, checkpoint)
        base = resources.analyzer(model_config, trained.config)
        segmenter, estimator = segmenters.get("hybrid")(), estimators.get("rredcot")()
        progress = StreamlitProgress("Scoring with the base and the trained model")
        before = base.analyze(trace, segmenter, estimator, progress)
        after = trained.analyze(trace, segmenter, estimator, progress)
        progress.close()
    except RredcotError as error:
        st.error(str(error))
        return
    shift = value_shift(before.values.values, after.values.values)
    left, right = st.columns(2)
    curves = {"base": before.values.values, f"trained (step {trained_step})": after.values.values}
    left.plotly_chart(value_curves(curves, title="Q̂ before and after training"), key="train_before_after")
    right.plotly_chart(value_curves({"trained − base": shift["delta"]}, title="Value shift per state"),
                       key="train_shift")  # fmt: skip
    st.caption(
        f"Mean |shift| {shift['mean_abs']:.3f}; the largest is at state s{shift['largest_state']}. "
        "The text is the same for both models: only the values the model assigns to it moved."
    )
