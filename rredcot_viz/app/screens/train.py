"""Train: start a short online RL refinement, watch it learn, open any step to see which segments got which
advantage, and compare the value curves of held-out traces before and after."""

from __future__ import annotations

import streamlit as st

from rredcot_viz.figures.training import METRIC_TITLES
from rredcot_viz.ui import resources
from rredcot_viz.ui.pickers import model_picker, model_warning
from rredcot_viz.ui.train_views import before_after, live_view, new_run_form, resume_control, step_inspector
from rredcot_viz.workflows.train import training_runs

DEFAULT_METRICS = ["reward_mean", "held_out_accuracy", "advantage_abs_mean", "zero_variance_groups"]

model_config = model_picker()
st.title("Train")
model_warning(model_config)
st.caption(
    "Short LoRA refinements on the built-in arithmetic task (8 trained rollouts per problem). With the embedded "
    "135M model held-out accuracy starts near 17%: gains over a few steps are small and noisy, so compare several "
    "seeds before reading anything into one curve. The form says how long a run takes on this machine."
)
store = resources.store()
new_run_form(model_config)
runs = training_runs(store)
resume_control(model_config, store, runs)

labels = {r.run_id: f"{r.run_id} ({r.status})" for r in runs.itertuples()} if len(runs) else {}
known = list(labels)
chosen = st.multiselect(
    "Runs to plot (overlaid)",
    known,
    default=[r for r in st.session_state.get("train_runs", known[:1]) if r in known],
    key="train_plot_runs",
)
metric_names = st.multiselect(
    "Curves", list(METRIC_TITLES), default=DEFAULT_METRICS, format_func=METRIC_TITLES.get, key="train_metrics"
)
live_view(store, chosen, metric_names, labels, known)

st.subheader("Step inspector")
st.caption(
    "Each row is one rollout of the step, shaded segment by segment by the advantage the loss gave it "
    "(green pushed up, red pushed down, one colour scale for the step). A reset group shows its failed parent "
    "first; the shared prefix is greyed and struck through: it is masked out of the loss."
)
if known:
    step_inspector(store, known, labels)

st.subheader("Before and after")
st.caption(
    "Re-analyse a trace with the run's last checkpoint and compare its RREDCoT value curve with the base "
    "model's: the base model's own answers to held-out problems (scored under the trainer's prompt), or any "
    "sample trace (scored under the app's chat prompt, so the shift also shows what the adapter does off-task)."
)
before_after(model_config, known, labels)
