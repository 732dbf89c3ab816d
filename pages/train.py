"""Train: start a short online RL refinement, watch it learn, open any step to see which segments got which
advantage, and compare the value curves of held-out traces before and after."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.figures import advantage_rows, training_curves, value_curves
from rredcot_viz.figures.training import METRIC_TITLES
from rredcot_viz.segmenters import segmenters
from rredcot_viz.training import latest_checkpoint, methods, quick
from rredcot_viz.training.config import method_config_type
from rredcot_viz.ui import resources, widgets
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.workflows.train import (
    checkpoint_root,
    new_run_id,
    run_training,
    stored_run,
    training_runs,
    value_shift,
)

DEFAULT_METRICS = ["reward_mean", "held_out_accuracy", "advantage_abs_mean", "zero_variance_groups"]

model_config = widgets.model_picker()
st.title("Train")
widgets.model_warning(model_config)
st.caption(
    "Short LoRA refinements on the built-in arithmetic task (8 trained rollouts per step). On a CPU with the "
    "embedded 135M model a step takes 10-30 s and held-out accuracy starts near 17%: gains over 30 steps are "
    "small and noisy, so compare several seeds before reading anything into one curve."
)
store, jobs = resources.store(), resources.jobs()


def start_run(config, run_id: str | None = None, resume: bool = False) -> None:
    base = resources.model(model_config)
    run_id = run_id or new_run_id(config)

    def work(job):
        return run_training(
            base,
            config,
            store,
            run_id=run_id,
            resume=resume,
            progress=lambda done, total: job.progress(done, total, "steps"),
        )

    st.session_state["train_job"] = jobs.submit(f"{config.method} run {run_id}", work).id
    st.session_state["train_runs"] = [run_id, *st.session_state.get("train_runs", [])][:4]
    st.session_state["train_job_run"] = run_id


method = st.selectbox(
    "Method", methods.names(), index=methods.names().index("rredcot"), key="train_method",
    help="each method adds its own settings below (generated from its config: nothing is retyped here)",
)  # fmt: skip
with st.expander("New run", expanded=True), st.form("train_form"):
    values = settings_form(method_config_type(method), "train", initial=quick(method), exclude=("method",))
    submitted = st.form_submit_button("Start run", type="primary")
if submitted:
    running = jobs.get(st.session_state.get("train_job", ""))
    if running is not None and running.active:
        st.warning("A run is in progress; stop it first (one model job at a time on this machine).")
    else:
        try:
            start_run(quick(method, **values))
        except RredcotError as error:
            st.error(str(error))

runs = training_runs(store)
job = jobs.get(st.session_state.get("train_job", ""))
in_progress = st.session_state.get("train_job_run") if job is not None and job.active else None
unfinished = runs[runs["status"] != "done"]["run_id"].tolist() if len(runs) else []
resumable = [r for r in unfinished if r != in_progress and latest_checkpoint(checkpoint_root(r)) is not None]
if resumable:
    left, right = st.columns([3, 1])
    resume_id = left.selectbox("Resume a stopped run from its last checkpoint", resumable, key="train_resume")
    if right.button("Resume", key="train_resume_button"):
        try:
            config, _ = stored_run(store, resume_id)
            start_run(config, resume_id, resume=True)
        except RredcotError as error:
            st.error(str(error))

labels = {r.run_id: f"{r.run_id} ({r.status})" for r in runs.itertuples()} if len(runs) else {}
known = list(labels)
chosen = st.multiselect(
    "Runs to plot (overlaid)",
    known,
    default=[r for r in st.session_state.get("train_runs", known[:1]) if r in known],
    key="train_plot_runs",
)
metric_names = st.multiselect(
    "Curves",
    list(METRIC_TITLES),
    default=DEFAULT_METRICS,
    format_func=lambda n: METRIC_TITLES[n],
    key="train_metrics",
)


@st.fragment(run_every=2.0 if job is not None and job.active else None)
def live_view() -> None:
    """Progress and curves, redrawn from the store every two seconds while a run is in progress."""
    current = jobs.get(st.session_state.get("train_job", ""))
    if current is not None:
        ended = widgets.job_status(
            current,
            "train",
            f"{current.label}: step {current.done}/{current.total}, {current.elapsed:.0f} s",
            cancel_label="Stop",
            cancel_note="Stopping after the current step; its state is saved so the run can be resumed.",
            cancelled=f"Stopped after {current.elapsed:.0f} s; resume it from its last checkpoint below.",
            done=f"{current.label} finished in {current.elapsed:.0f} s.",
        )
        if ended:
            st.rerun()  # once: refresh the run list and stop polling
    running = [st.session_state.get("train_job_run")] if current is not None and current.active else []
    plotted = list(dict.fromkeys([*chosen, *running]))  # a run started this render is not in the list yet
    if plotted and metric_names:
        metrics = store.train_metrics(plotted)
        st.plotly_chart(training_curves(metrics, metric_names, labels), key="train_curves")
    elif not known:
        st.info("No training runs yet: start one above (a 30-step run takes about 10 minutes on a CPU).")


live_view()

st.subheader("Step inspector")
st.caption(
    "Each row is one rollout of the step, shaded segment by segment by the advantage the loss gave it "
    "(green pushed up, red pushed down, one colour scale for the step). A reset group shows its failed parent "
    "first; the shared prefix is greyed and struck through: it is masked out of the loss."
)
if known:
    if st.session_state.get("train_inspect_run") not in known:
        st.session_state.pop("train_inspect_run", None)
    inspect_run = st.selectbox("Run", known, key="train_inspect_run", format_func=labels.get)
    rollout_steps = store.train_rollout_steps(inspect_run)
    if not rollout_steps:
        st.info("This run has not kept any rollouts yet.")
    else:
        step = st.select_slider("Step", rollout_steps, value=rollout_steps[-1], key="train_step")
        records = store.train_rollouts(inspect_run, step)
        step_metrics = store.train_metrics([inspect_run])
        row = step_metrics[step_metrics["step"] == step]
        if len(row):
            columns = st.columns(4)
            for column, name in zip(columns, ["reward_mean", "advantage_abs_mean", "loss", "seconds"], strict=True):
                if name in row and pd.notna(row[name].iloc[0]):
                    column.metric(METRIC_TITLES.get(name, name), f"{float(row[name].iloc[0]):.3f}")
        st.html(advantage_rows(records))
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "group": r.get("group"),
                        "reward": r.get("reward"),
                        "tokens": r.get("tokens"),
                        "prefix tokens": r.get("suffix_start", 0),
                        "segment advantages": ", ".join(f"{a:+.2f}" for a in r.get("segment_advantages") or []),
                    }
                    for r in records
                ]
            ),
            hide_index=True,
            key="train_step_table",
        )

st.subheader("Before and after")
st.caption(
    "Re-analyse a trace with the run's last checkpoint and compare its RREDCoT value curve with the base "
    "model's: the base model's own answers to held-out problems (scored under the trainer's prompt), or any "
    "sample trace (scored under the app's chat prompt, so the shift also shows what the adapter does off-task)."
)
finished = [r for r in known if latest_checkpoint(checkpoint_root(r)) is not None]
if not finished:
    st.info("No run has a checkpoint yet.")
else:
    left, right = st.columns(2)
    compare_run = left.selectbox("Trained run", finished, key="train_compare_run", format_func=labels.get)
    candidates = resources.held_out_traces(model_config, compare_run) + resources.samples()
    trace = right.selectbox(
        "Trace",
        candidates,
        format_func=lambda t: f"{t.trace_id or t.short_id} · {t.question[:60]}",
        key="train_compare_trace",
    )
    if st.button("Compare base and trained", key="train_compare"):
        st.session_state["train_compare_key"] = (compare_run, trace.content_hash)
    if st.session_state.get("train_compare_key") == (compare_run, trace.content_hash):
        try:
            checkpoint = latest_checkpoint(checkpoint_root(compare_run)).name
            trained, trained_step = resources.trained_analyzer(model_config, compare_run, checkpoint)
            base = resources.analyzer(model_config, trained.config)
            segmenter = segmenters.get("hybrid")()
            progress = widgets.StreamlitProgress("Scoring with the base and the trained model")
            before = base.analyze(trace, segmenter, estimators.get("rredcot")(), progress)
            after = trained.analyze(trace, segmenter, estimators.get("rredcot")(), progress)
            progress.close()
        except RredcotError as error:
            st.error(str(error))
        else:
            shift = value_shift(before.values.values, after.values.values)
            left, right = st.columns(2)
            left.plotly_chart(
                value_curves(
                    {"base": before.values.values, f"trained (step {trained_step})": after.values.values},
                    title="Q̂ before and after training",
                ),
                key="train_before_after",
            )
            right.plotly_chart(
                value_curves({"trained − base": shift["delta"]}, title="Value shift per state"), key="train_shift"
            )
            st.caption(
                f"Mean |shift| {shift['mean_abs']:.3f}; the largest is at state s{shift['largest_state']}. "
                "The text is the same for both models: only the values the model assigns to it moved."
            )
