"""Diagnose: where did a failed trace go wrong, how sure are we, and what if it had continued differently?"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.capability import capability
from rredcot_viz.diagnosis.resample import ResetConfig, edit_segment, reset_resample
from rredcot_viz.diagnosis.value_detectors import curve_estimator
from rredcot_viz.diagnosis.verdicts import cached_verdict
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.figures import reset_tree, trace_heatmap, value_curves
from rredcot_viz.traces.needs import describe
from rredcot_viz.ui import resources, widgets
from rredcot_viz.ui.evaluation_panel import evaluation_panel

INLINE = ["min_sigma", "value_drop", "loo", "step_verifier"]
SAMPLED = ["self_localize", "mc"]

config = widgets.model_picker()
failed_only = st.sidebar.toggle("Failed traces only", value=True, key="diagnose_failed_only")
trace = widgets.trace_picker(only_failed=failed_only)
st.title("Diagnose")
widgets.model_warning(config)
if trace is None:
    st.stop()
if trace.outcome != 0.0:
    st.info(
        "This trace is not a failed one (outcome "
        f"{trace.outcome}); detectors still run, but a correct trace ideally has no first error."
    )
st.markdown(f"**Question.** {trace.question}  \n**Answer** {trace.answer} · **reference** {trace.reference_answer}")
segmenter = widgets.segmentation_controls("diagnose", trace, default="given" if trace.steps else "hybrid")
analysis_config = widgets.variant_control("diagnose")
analyzer = resources.analyzer(config, analysis_config)
chosen = st.multiselect(
    "Detectors",
    [*INLINE, *SAMPLED],
    default=INLINE,
    key="diagnose_detectors",
    help="step_verifier asks the model whether each step is correct (needs nothing but the steps); "
    "self_localize asks it for the first wrong step (SRPO prompt); mc samples rollouts (OmegaPRM search; with no "
    "reference answer a rollout succeeds when it agrees with the majority answer of rollouts from the question)",
)

# capability check first (trace fields only): detectors that cannot run say what the trace lacks, the rest run
instances = {name: detectors.get(name)() for name in chosen}
reports = {name: capability(detector, [trace]) for name, detector in instances.items()}
skipped = {name: describe(instances[name].missing(trace)) for name, r in reports.items() if not r.complete}
for name, lacking in skipped.items():
    st.warning(f"{name} cannot run on this trace: it needs {lacking}.")
estimator_name = curve_estimator(trace)  # None: no value curve for this trace
try:
    progress = widgets.StreamlitProgress("Running the detectors")
    estimate = (
        analyzer.analyze(trace, segmenter, estimators.get(estimator_name)(), progress) if estimator_name else None
    )
    analyzer.context(trace).stats  # noqa: B018  (entropies for the segmenter)
    segmentation = analyzer.segment(trace, segmenter)
    verdicts = {
        reports[name].label: cached_verdict(analyzer, trace, segmenter, detector, progress)
        for name, detector in instances.items()
        if name not in skipped
    }
    progress.close()
except RredcotError as error:
    st.error(str(error))
    st.stop()
VALUE_NOTES = {
    "answer_only": "this trace has a reference answer but no reference solution, so the curve is R̂ alone (β = 0).",
    "own_answer": "this trace has no reference answer, so the curve is the probability of its own answer "
    "(1 − that on a failed trace: it falls where support for the wrong answer rises).",
    "uniform": "this trace states no answer to score, so the curve is flat credit.",
}
if estimator_name in VALUE_NOTES:
    st.caption(f"Values from `{estimator_name}`: {VALUE_NOTES[estimator_name]}")
elif estimator_name is None:
    st.caption("No value curve: this trace has no outcome label and no reference answer to check its answer.")

segments = segmentation.segments
flags = [sum(v.prediction == s.index for v in verdicts.values()) for s in segments]
tips = [
    {
        **{f"{n} score": float(v.scores[s.index]) for n, v in verdicts.items()},
        **({"sigma": float(estimate.sigma[s.index])} if estimate else {}),
        "detectors flagging": float(flags[s.index]),
    }
    for s in segments
]
left, right = st.columns([3, 2])
left.html(
    trace_heatmap(
        [s.text for s in segments], flags, tips, scale="sequential", answer_text=trace.cot[segments[-1].char_span[1] :]
    )
)
left.caption("Darker = flagged as the first error by more detectors. Hover for every detector's score.")
if estimate:
    right.plotly_chart(
        value_curves({f"Q̂ ({estimator_name})": estimate.values.values}, title="Value along the trace"),
        key="diagnose_curve",
    )
verdict_rows = [
    {
        "detector": n,
        "first error (segment)": v.segment or "none",
        "abstained": v.abstained,
        "seconds": round(v.cost.seconds, 1),
    }
    for n, v in verdicts.items()
]
if trace.first_error is not None:
    verdict_rows.append(
        {
            "detector": "label",
            "first error (segment)": trace.first_error + 1 if trace.first_error >= 0 else "none",
            "abstained": False,
            "seconds": 0.0,
        }
    )
right.dataframe(pd.DataFrame(verdict_rows), hide_index=True, key="diagnose_verdicts")

st.subheader("Reset and resample")
col_seg, col_g, col_tokens, col_seed = st.columns(4)
default_segment = next((v.segment for v in verdicts.values() if v.segment), 1)
segment = col_seg.number_input(
    "Reset before segment",
    1,
    len(segments),
    int(default_segment),
    key="diagnose_segment",
    help="Keeps segments before it and samples new continuations (defaults to a verdict)",
)
reset_config = ResetConfig(
    suffixes=col_g.slider("Suffixes G", 1, 16, 4, key="diagnose_g"),
    max_new_tokens=col_tokens.select_slider("Max new tokens", [64, 128, 256, 512], 128, key="diagnose_tokens"),
    seed=col_seed.number_input("Seed", 0, 10_000, 0, key="diagnose_seed"),
)
if st.button("Resample from here", key="diagnose_resample"):
    with st.spinner("Sampling suffixes..."):
        try:
            result = reset_resample(analyzer, trace, segmenter, int(segment), reset_config)
            st.session_state["diagnose_reset"] = (trace.content_hash, result)
        except RredcotError as error:
            st.error(str(error))
owner, reset = st.session_state.get("diagnose_reset", (None, None))
if reset is not None and owner == trace.content_hash and reset.k == len(segments):
    low, high = reset.interval
    st.caption(
        f"Reset before segment {reset.segment} of {reset.k}: {reset.successes}/{len(reset.suffixes)} suffixes "
        f"reach the reference answer (Wilson 95% [{low:.2f}, {high:.2f}]); the original trace "
        f"{'succeeded' if trace.outcome else 'failed'}."
    )
    branches = [
        (f"seed {r.seed}: {r.answer or 'no answer'}", r.correct, " ".join(r.text.split())[:300]) for r in reset.suffixes
    ]
    st.plotly_chart(
        reset_tree(
            f"segments 1–{reset.segment - 1}" if reset.segment > 1 else "question only",
            branches,
            (str(trace.answer), bool(trace.outcome)),
        ),
        key="diagnose_tree",
    )
    for r in reset.suffixes:
        with st.expander(f"{'✅' if r.correct else '❌'} seed {r.seed} → {r.answer} ({r.finish_reason})"):
            st.text(reset.prefix_text[-400:] + "⟨reset⟩" + r.text)

with st.expander("Edit a segment by hand (off-policy) and re-score"):
    edit_index = st.number_input("Segment to replace", 1, len(segments), int(segment), key="diagnose_edit_index")
    new_text = st.text_area("Replacement text", segments[int(edit_index) - 1].text, key="diagnose_edit_text")
    if st.button("Re-score the edited trace", key="diagnose_edit"):
        try:
            edited = edit_segment(
                analyzer,
                trace,
                segmenter,
                int(edit_index),
                new_text,
                estimators.get("answer_only" if trace.reference_answer else "own_answer")(),
                reset_config,
            )
            curves = {"R̂ original": edited.original.values.values, "R̂ edited": edited.edited.values.values}
            st.plotly_chart(
                value_curves(curves, title="Answer-now probability before and after the edit"),
                key="diagnose_edit_curve",
            )
            correct = sum(r.correct for r in edited.continuations)
            st.caption(
                f"On-policy continuations after the edited segment: {correct}/{len(edited.continuations)} "
                "reach the reference answer."
            )
        except RredcotError as error:
            st.error(str(error))

evaluation_panel(config)
