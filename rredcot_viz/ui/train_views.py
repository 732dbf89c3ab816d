"""The Train page's parts: the generated new-run form, resuming, live curves, the step inspector, and the
before/after comparison of a trained adapter."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st
import torch

from rredcot_viz.errors import RredcotError
from rredcot_viz.figures import advantage_rows, training_curves, value_curves
from rredcot_viz.figures.training import METRIC_TITLES
from rredcot_viz.jobs import Job
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.store import Store
from rredcot_viz.training import TrainConfig, latest_checkpoint, method_config_type, methods, quick, stored_train_config
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import JobTexts, StreamlitProgress, job_progress, start_job
from rredcot_viz.ui.method_controls import method_picker
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.ui.shading import relative_switch
from rredcot_viz.workflows.estimate import estimate_training, time_line
from rredcot_viz.workflows.train import checkpoint_root, new_run_id, run_training, stored_run, value_change

APP_EVALUATION = {"eval_problems": 16, "eval_samples": 1}  # held-out answers per evaluation where the CPU is slow


def trained_run(job: Job | None) -> str | None:
    """The run id a training job trains (its key), so a reloaded page finds the run of the running job."""
    key = job.key if job is not None else None
    return key.removeprefix("train:") if key and key.startswith("train:") else None


def start_run(model_config: ModelConfig, config: TrainConfig, run_id: str | None = None, resume: bool = False) -> None:
    """A training run as a background job (one model job at a time on this machine). Asking for the run that
    is already training (the same settings, or resuming the same run) follows it instead of starting another."""
    jobs, store = resources.jobs(), resources.store()
    running = jobs.active("train")
    if running is not None:
        current = trained_run(running)
        stored = store.train_run(current) if current else None
        same = (resume and current == run_id) or (not resume and stored is not None and _same(stored[0], config))
        if not same:
            st.warning(f"Run {current} is training; stop it first (one model job at a time on this machine).")
            return
        st.session_state["train_job"], st.session_state["train_job_joined"] = running.id, True
        st.rerun()
    base = resources.model(model_config)
    run_id = run_id or new_run_id(config)

    def work(job: Job) -> object:
        job.note("preparing the trainer" if not resume else "loading the checkpoint")
        progress = lambda done, total: job.progress(done, total)  # noqa: E731
        return run_training(base, config, store, run_id=run_id, resume=resume, progress=progress, on_phase=job.note)

    st.session_state["train_runs"] = [run_id, *st.session_state.get("train_runs", [])][:4]
    start_job(
        "train_job", f"{config.method} run {run_id}", work, kind="train", key=f"train:{run_id}", total=config.steps
    )


def _same(stored: dict, config: TrainConfig) -> bool:
    """Whether a stored run's settings are ``config`` (so asking for it again joins that run)."""
    try:
        return stored_train_config(stored) == config
    except RredcotError:
        return False


def new_run_form(model_config: ModelConfig) -> None:
    """The chosen method's settings, generated from its config and started from the quick preset (with cheaper
    held-out evaluations on a CPU, said beside the form), and how long the run will take here."""
    method = method_picker("Method", methods, methods.names(), "train_method", "rredcot")
    cheap = not torch.cuda.is_available()
    initial = quick(method, **(APP_EVALUATION if cheap else {}))
    with st.expander("New run", expanded=True):
        if cheap:
            st.caption(
                f"Held-out evaluations start at {initial.eval_problems} problems × {initial.eval_samples} answer "
                f"on this CPU (the quick preset's {quick(method).eval_problems} × {quick(method).eval_samples} "
                "takes minutes per evaluation on 2 cores); raise them for a finer accuracy curve."
            )
        # Plain widgets, not a form: the estimate below follows every change (a form sends its values only on
        # submit, so the estimate showed the defaults until Start), and only the button starts a run (not Enter).
        values = settings_form(method_config_type(method), "train", initial=initial, exclude=("method",))
        try:
            config = quick(method, **values)
        except RredcotError as error:
            st.error(str(error))
            return
        seconds, how = estimate_training(resources.model(model_config), config, resources.store())
        st.caption(time_line(seconds, how))
        submitted = st.button("Start run", type="primary", key="train_start")
    if submitted:
        start_run(model_config, config)


def resume_control(model_config: ModelConfig, store: Store, runs: pd.DataFrame) -> None:
    """Resume a stopped run from its last checkpoint."""
    in_progress = trained_run(resources.jobs().active("train"))
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


def live_view(
    store: Store, plotted: list[str], metric_names: list[str], labels: dict[str, str], known: list[str]
) -> None:
    """The run's progress and Stop button (found again after a reload) and the chosen runs' curves, redrawn
    from the store every two seconds while it runs; the whole page reruns when the running run first appears
    in the store or keeps a new step, so the run lists and the step inspector follow it."""
    jobs = resources.jobs()
    at_render = {run: _last_kept_step(store, run) for run in known}

    def curves(job: Job | None) -> None:
        running = trained_run(job) if job is not None and job.active else None
        moved = running is not None and _last_kept_step(store, running) != at_render.get(running, "not listed")
        if moved and running in store.training_runs()["run_id"].tolist():
            st.rerun(scope="app")
        shown = list(dict.fromkeys([*plotted, *([running] if running else [])]))  # a new run is not listed yet
        if shown and metric_names:
            st.plotly_chart(training_curves(store.train_metrics(shown), metric_names, labels), key="train_curves")
        elif not labels:
            st.info("No training runs yet: start one above (the estimate under the form says how long it takes).")

    texts = JobTexts(
        cancel="Stop",
        cancel_note="Stopping at the next sampling or scoring step; the last whole step is saved so the run can be "
        "resumed.",
        cancelled=_stopped_text(jobs.get(st.session_state.get("train_job", "")) or jobs.active("train")),
        done="The run finished.",
    )
    job_progress(
        "train_job", texts, on_end=lambda job: st.rerun(), body=curves, every=2.0, find=lambda: jobs.active("train")
    )


def _stopped_text(job: Job | None) -> str:
    """What a stopped run can do next: resume from the checkpoint its stop saved, or nothing (stopped before its
    first step finished: it said "resume it below" beside "No run has a checkpoint")."""
    run = trained_run(job)
    checkpoint = latest_checkpoint(checkpoint_root(run)) if run else None
    step = int(checkpoint.name.removeprefix("step_")) if checkpoint is not None else 0
    if step:
        return f"Stopped after step {step}; resume it from that checkpoint below."
    if checkpoint is not None:
        return (
            "Stopped before its first step finished: resuming it below starts again from step 0 with its settings "
            "(no trained checkpoint yet, so Before and after has nothing to compare)."
        )
    return "Stopped before anything was saved: start a new run."


def _last_kept_step(store: Store, run: str) -> int | None:
    steps = store.train_rollout_steps(run)
    return steps[-1] if steps else None


def step_inspector(store: Store, known: list[str], labels: dict[str, str]) -> None:
    """One step's rollouts as rows of segments shaded by the advantage each got, and the step's numbers."""
    if st.session_state.get("train_inspect_run") not in known:
        st.session_state.pop("train_inspect_run", None)
    run = st.selectbox("Run", known, key="train_inspect_run", format_func=labels.get)
    steps = store.train_rollout_steps(run)
    if not steps:
        st.info("This run has not kept any rollouts yet.")
        return
    left, right = st.columns([3, 1])
    step = left.select_slider("Step", steps, value=steps[-1], key="train_step")
    with right:
        relative = relative_switch("train_relative", "this step")
    records = store.train_rollouts(run, step)
    metrics = store.train_metrics([run])
    row = metrics[metrics["step"] == step]
    for column, name in zip(st.columns(4), ["reward_mean", "advantage_abs_mean", "loss", "seconds"], strict=True):
        if len(row) and name in row and pd.notna(row[name].iloc[0]):
            column.metric(METRIC_TITLES.get(name, name), f"{float(row[name].iloc[0]):.3f}")
    notes = step_notes(row.iloc[0].to_dict() if len(row) else {}, stored_run(store, run)[0])
    if notes:
        st.caption(" · ".join(notes))
    st.html(advantage_rows(records, relative=relative))
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
            + (
                f"; a uniform reset over these parents' steps starts empty with chance "
                f"{present['reset_uniform_empty_chance']:.0%} (mean 1/H, {present['reset_steps_mean']:.1f} steps)"
                if "reset_uniform_empty_chance" in present and "reset_steps_mean" in present
                else ""
            )
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
    finished = [r for r in known if (latest_checkpoint(checkpoint_root(r)) or Path("step_0000")).name != "step_0000"]
    if not finished:
        st.info("No run has a checkpoint after a training step yet.")
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
        progress = StreamlitProgress("Scoring with the base and the trained model")
        compared = value_change(base, trained, trace, progress)
        progress.close()
    except RredcotError as error:
        st.error(str(error))
        return
    shift = compared.shift
    left, right = st.columns(2)
    curves = {"base": compared.before.values.values, f"trained (step {trained_step})": compared.after.values.values}
    left.plotly_chart(value_curves(curves, title="Q̂ before and after training"), key="train_before_after")
    right.plotly_chart(value_curves({"trained − base": shift["delta"]}, title="Value shift per state"),
                       key="train_shift")  # fmt: skip
    st.caption(
        f"Mean |shift| {shift['mean_abs']:.3f}; the largest is at state s{shift['largest_state']}. "
        "The text is the same for both models: only the values the model assigns to it moved."
    )
