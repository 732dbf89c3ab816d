"""The Dataset page's run view: an RL run (imported TRL / verl logs, or trained here) by step and prompt.

Reward and credit per step; the groups where RREDCoT and GRPO disagree most; the groups of one prompt side by
side (or one step's groups), each rollout's segments shaded by its RREDCoT advantage next to the GRPO
advantage it got. An imported run's RREDCoT credit comes from an analysis of its traces, started here (one
step at a time, in the background). The run, step and prompt shown live in the URL (``?run=...&step=7``).
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import default_estimator
from rredcot_viz.estimators.base import DEFAULT_ESTIMATOR
from rredcot_viz.figures.runs import prompt_groups_html, run_step_figure
from rredcot_viz.jobs import Job
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.store import Store
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import job_progress
from rredcot_viz.ui.links import as_text
from rredcot_viz.ui.method_controls import estimator_picker, segmenter_picker
from rredcot_viz.ui.shading import relative_switch
from rredcot_viz.ui.share import run_download
from rredcot_viz.workflows.runs import (
    IMPORTED_KIND,
    RolloutGroup,
    credit_analyses,
    disagreeing_groups,
    groups_frame,
    load_run,
    prompt_groups,
    rollout_runs,
    run_traces,
    score_rollouts,
    scoring_check,
    step_table,
)

LINK_KEYS = {"run": "runs_run", "step": "runs_step", "prompt": "runs_prompt"}


def rollout_runs_panel(store: Store, config: ModelConfig) -> None:
    """The run view, when the store has a run with rollouts."""
    runs = rollout_runs(store)
    if runs.empty:
        return
    st.header("RL runs")
    st.caption(
        "A run imported from TRL completion logs or verl rollout dumps (import its folder above), or trained on the "
        "Train page, by step and prompt: what each rollout was rewarded, the GRPO advantage it got, and where "
        "RREDCoT would have put the credit."
    )
    _restore_link(runs)
    labels = {r.run_id: f"{r.label or r.run_id} · {r.kind} · {r.steps} steps, {r.rollouts} rollouts" for r in
              runs.itertuples()}  # fmt: skip
    run_id = st.selectbox("Run", list(labels), key="runs_run", format_func=labels.get)
    imported = runs.set_index("run_id").loc[run_id, "kind"] == IMPORTED_KIND
    analysis = _credit_source(store, run_id) if imported else None
    try:
        groups = load_run(store, run_id, analysis)
    except RredcotError as error:
        st.error(str(error))
        return
    steps = step_table(groups)
    st.plotly_chart(run_step_figure(steps), key="runs_steps")
    if imported:
        _scoring(store, config, run_id, sorted(steps["step"].tolist()))
    elif not steps["credited"].any():
        st.info("This run's method computed no RREDCoT credit (GRPO does not): its rollouts show GRPO's advantage.")
    shown = _groups_view(groups)
    st.query_params.from_dict({"run": run_id, **_shown_params()})
    settings = {"credit from": analysis or ("the trainer" if not imported else "none")}
    run_download(run_id, groups, steps, settings, shown)
    st.divider()  # the page's own dataset analysis follows


def _restore_link(runs: pd.DataFrame) -> None:
    """The run, step and prompt of a link (``?run=...&step=...&prompt=...``), once per link."""
    given = {name: st.query_params.get(name) for name in LINK_KEYS if st.query_params.get(name)}
    signature = f"runs?{sorted(given.items())}"
    if not given or st.session_state.get("runs_link") == signature:
        return
    st.session_state["runs_link"] = signature
    if given.get("run") not in set(runs["run_id"]):
        run = as_text(given.get("run", ""))
        st.warning(f"This link's run {run} is not in this store; showing the newest run.", icon="🔗")
        return
    st.session_state["runs_run"] = given["run"]
    for name in ("step", "prompt"):
        if name in given and re.fullmatch(r"-?[0-9]+", given[name]):  # ASCII digits: "²".isdigit() is true
            st.session_state[LINK_KEYS[name]] = int(given[name])
    if "step" in given:
        st.session_state["runs_view"] = "One step"


def _shown_params() -> dict[str, str]:
    view = st.session_state.get("runs_view", "One prompt")
    name = "step" if view == "One step" else "prompt"
    value = st.session_state.get(LINK_KEYS[name])
    return {} if value is None else {name: str(value)}


def _credit_source(store: Store, run_id: str) -> str | None:
    """The analysis whose sigma is an imported run's RREDCoT credit (the newest covering one by default)."""
    covering = credit_analyses(store, run_id)
    if "runs_scored" in st.session_state:  # a scoring job just ended: show its credit
        st.session_state["runs_analysis"] = st.session_state.pop("runs_scored")
    if covering.empty:
        st.info("No RREDCoT credit yet: score a step's rollouts below (a background job), then compare.")
        return None
    described = {
        r.run_id: f"{r.estimator} · {r.segmenter} · {r.covered} traces · {r.model_name}" for r in covering.itertuples()
    }
    return st.selectbox("RREDCoT credit from", list(described), key="runs_analysis", format_func=described.get)


def _scoring(store: Store, config: ModelConfig, run_id: str, steps: list[int]) -> None:
    """Score one step's rollouts (or all) with the chosen segmenter and estimator, in the background."""
    with st.expander("Score rollouts with RREDCoT"):  # not a popover: one stayed open over the results
        step = st.selectbox("Step", ["all", *steps], key="runs_score_step")
        traces = run_traces(store, run_id, None if step == "all" else int(step))
        if not traces:
            st.caption("No stored traces for this step.")
            return
        segmenter = segmenter_picker("runs", traces[0])
        estimator, analysis_config = estimator_picker("runs", default=default_estimator(traces, DEFAULT_ESTIMATOR))
        analyzer = resources.analyzer(config, analysis_config)
        chosen_step = None if step == "all" else int(step)
        check = scoring_check(store, run_id, estimator, chosen_step)  # before any job: what the traces lack
        if check.refusal():
            st.error(check.refusal())
        else:
            st.caption(f"Capability check: {check.report.line()}.")

        def work(job: Job) -> str:
            progress = lambda done, total: job.progress(done, total, "rollouts scored")  # noqa: E731
            return score_rollouts(analyzer, store, run_id, segmenter, estimator, chosen_step, progress)

        label = f"Score {len(check.runnable)} distinct rollouts"
        if st.button(label, key="runs_score", disabled=not check.runnable):
            st.session_state["runs_job"] = resources.jobs().submit(f"RREDCoT credit of {run_id}", work,
                                                                   unit="traces").id  # fmt: skip

    def opened(job: Job) -> None:
        if job.status == "done":
            st.session_state["runs_scored"] = job.result
            st.rerun(scope="app")

    job_progress("runs_job", on_end=opened)


def _groups_view(groups: list[RolloutGroup]) -> list[RolloutGroup]:
    """The most disagreeing groups, then one prompt across steps or one step's groups; returns those shown."""
    top = disagreeing_groups(groups, 10)
    if top:
        st.markdown("**Where RREDCoT and GRPO disagree most** (mean |RREDCoT − GRPO advantage| per character)")
        picked = st.dataframe(groups_frame(top), hide_index=True, on_select="rerun", selection_mode="single-row",
                              key="runs_top")  # fmt: skip
        rows = picked.selection.rows if picked else []
        chosen = (top[rows[0]].step, top[rows[0]].prompt) if rows else None
        if chosen is not None and st.session_state.get("runs_top_opened") != chosen:  # a new pick opens its prompt
            st.session_state.update(runs_view="One prompt", runs_prompt=chosen[1], runs_top_opened=chosen)
    view = st.radio("Show", ["One prompt", "One step"], horizontal=True, key="runs_view")
    if view == "One step":
        steps = sorted({g.step for g in groups})
        if st.session_state.get("runs_step") not in steps:
            st.session_state["runs_step"] = steps[-1]
        step = st.select_slider("Step", steps, key="runs_step")
        shown = [g for g in groups if g.step == step]
    else:
        questions = {g.prompt: g.question for g in groups}
        if st.session_state.get("runs_prompt") not in questions:
            st.session_state["runs_prompt"] = top[0].prompt if top else min(questions)
        prompt = st.selectbox("Prompt", sorted(questions), key="runs_prompt",
                              format_func=lambda p: f"{p} · {' '.join(questions[p].split())[:90]}")  # fmt: skip
        shown = prompt_groups(groups, prompt)
    st.html(prompt_groups_html(shown, relative=relative_switch("run_relative", "the groups shown")))
    return shown
