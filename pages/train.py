"""Train: start a short online RL refinement, watch it learn, open any step to see which segments got which
advantage, and compare the value curves of held-out traces before and after."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.coupling import COUPLING_MODES
from rredcot_viz.figures import advantage_rows, training_curves, value_curves
from rredcot_viz.figures.training import METRIC_TITLES
from rredcot_viz.segmenters import segmenters
from rredcot_viz.training import latest_checkpoint, methods, quick
from rredcot_viz.training.config import LAYOUTS, LOSSES
from rredcot_viz.training.inspect import stored_run, training_runs, value_shift
from rredcot_viz.training.runs import checkpoint_root, new_run_id, run_training
from rredcot_viz.ui import resources, widgets

RESET_METHODS = ("rrpo", "srpo")
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


defaults = quick()  # every default below is the preset's (TrainConfig), never retyped here
with st.expander("New run", expanded=True):
    with st.form("train_form"):
        top = st.columns(4)
        method = top[0].selectbox("Method", methods.names(), index=methods.names().index("rredcot"), key="train_method")
        steps = top[1].number_input("Steps", 1, 500, defaults.steps, key="train_steps")
        seed = top[2].number_input("Seed", 0, 10_000, 0)
        learning_rate = top[3].select_slider(
            "Learning rate", [1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4], value=defaults.learning_rate
        )
        middle = st.columns(4)
        group_size = middle[0].number_input(
            "Group size (grpo, rredcot)", 2, 32, defaults.group_size, key="train_group_size"
        )
        layout = middle[1].selectbox("Reset layout (rrpo, srpo)", LAYOUTS, index=LAYOUTS.index(defaults.layout))
        loss = middle[2].selectbox(
            "Loss",
            LOSSES,
            index=LOSSES.index(defaults.loss),
            help="ppo_clip: the PPO clipped surrogate, token mean (METHOD.md §5); reinforce: SRPO's sequence mean",
        )
        kl_beta = middle[3].number_input("KL to the start (beta)", 0.0, 1.0, 0.0, step=0.01)
        bottom = st.columns(4)
        coupling = bottom[0].selectbox(
            "Coupling (rredcot)",
            list(COUPLING_MODES),
            help="METHOD.md §5: value_baseline (default: Q-hat as a critic; never pushes a correct rollout's "
            "tokens down) or a / b / c (a and b can, with a weak estimator)",
        )
        coupling_lambda = bottom[1].slider("lambda (coupling a/b/c)", 0.0, 1.0, defaults.coupling_lambda)
        segments = bottom[2].number_input("Segments per rollout (K)", 1, 12, defaults.segments)
        lora_rank = bottom[3].select_slider("LoRA rank", [4, 8, 16, 32, 64], value=defaults.lora_rank)
        extra = st.columns(4)
        eval_every = extra[0].number_input(
            "Evaluate every (steps)", 1, 100, defaults.eval_every, key="train_eval_every"
        )
        eval_problems = extra[1].number_input(
            "Held-out problems", 1, 256, defaults.eval_problems, key="train_eval_problems"
        )
        max_new_tokens = extra[2].select_slider(
            "Max new tokens", [24, 32, 48, 64, 96, 128], value=defaults.max_new_tokens, key="train_max_tokens"
        )
        temperature = extra[3].slider("Temperature", 0.1, 1.5, defaults.temperature)
        gae_lambda = st.slider(
            "GAE lambda over segments (value_baseline)",
            0.0,
            1.0,
            defaults.gae_lambda,
            help="1: every token of a correct rollout keeps a non-negative advantage; below 1 credit concentrates "
            "on the segments where Q-hat moved",
        )
        submitted = st.form_submit_button("Start run", type="primary")
    if submitted:
        running = jobs.get(st.session_state.get("train_job", ""))
        if running is not None and running.active:
            st.warning("A run is in progress; stop it first (one model job at a time on this machine).")
        else:
            try:
                config = quick(
                    method=method,
                    steps=int(steps),
                    seed=int(seed),
                    learning_rate=float(learning_rate),
                    group_size=int(group_size),
                    layout=layout,
                    loss=loss,
                    kl_beta=float(kl_beta),
                    coupling=coupling,
                    coupling_lambda=float(coupling_lambda),
                    gae_lambda=float(gae_lambda),
                    segments=int(segments),
                    lora_rank=int(lora_rank),
                    lora_alpha=int(lora_rank),
                    eval_every=int(eval_every),
                    eval_problems=int(eval_problems),
                    max_new_tokens=int(max_new_tokens),
                    temperature=float(temperature),
                )
                start_run(config)
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
