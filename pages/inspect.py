"""Inspect: one trace, segmented, with its state values and redistributed rewards shaded over the text."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.estimators.coupling import uniform_credit
from rredcot_viz.figures import credit_bars, trace_heatmap, value_curves
from rredcot_viz.segmenters.hybrid import replay
from rredcot_viz.ui.analysis import live_analysis, recorded_analysis
from rredcot_viz.ui.pickers import model_picker, trace_picker

SHADES = {
    "sigma": "σ: credit this segment earned (value after minus before)",
    "Q_hat": "Q̂: estimated chance of ending right from here",
    "R_hat": "R̂: chance of the right answer if it stopped here",
    "v_hat": "v̂: how well the reference solution continues from here",
}

config = model_picker()
trace = trace_picker()
st.title("Inspect")
with st.expander("What am I looking at?"):
    st.markdown(
        "A reasoning trace is cut into segments. For each point between segments the model estimates how likely "
        "the trace is to end with the right answer from there (**Q̂**), from two parts: **R̂**, the chance it "
        "would give the right answer if it stopped now, and **v̂**, how naturally the reference solution "
        "continues from here. A segment's credit **σ** is how much it moved that estimate: green segments "
        "raised it, red ones lowered it, and the credits add up to the outcome."
    )
    st.page_link("pages/learn.py", label="Learn the idea on a toy problem you control", icon="🎓")
if trace is None:
    st.stop()

st.markdown(f"**Question.** {trace.question}")
col_a, col_b, col_c = st.columns(3)
col_a.metric("Trace answer", str(trace.answer))
col_b.metric("Reference answer", str(trace.reference_answer))
col_c.metric("Outcome R", {1.0: "1 (correct)", 0.0: "0 (wrong)"}.get(trace.outcome, "unknown"))

analysis = recorded_analysis("inspect", trace) or live_analysis("inspect", config, trace)
result = analysis.result

segments = result.segmentation.segments
components = result.values.components
state_values = {"Q_hat": result.values.values, **{k: v for k, v in components.items() if k in ("R_hat", "v_hat")}}
st.caption(f"K = {result.k} segments · {analysis.cost_caption}")
for note in analysis.notes:
    st.caption(note)
for note in result.warnings + result.values.notes:
    st.info(note)

col_sum, col_r, col_variant = st.columns(3)
col_sum.metric("Σσ", f"{result.sigma.sum():+.4f}")
col_r.metric("Outcome R", f"{result.outcome:g}")
col_variant.metric("Variant", result.variant, help="exact_sum forces Σσ = R; difference gives Σσ = R − Q̂₁")

available = ["sigma", *[k for k in ("Q_hat", "R_hat", "v_hat") if k in state_values]]
shade = st.segmented_control("Shade by", available, default="sigma", format_func=SHADES.get, key="inspect_shade")
shade = shade or "sigma"
scores = result.sigma if shade == "sigma" else state_values[shade][: result.k]
tooltips = []
for segment in segments:
    tip = {name: float(values[segment.index]) for name, values in state_values.items()}
    tip["sigma"] = float(result.sigma[segment.index])
    tooltips.append(tip)
answer_text = trace.cot[segments[-1].char_span[1] :]
view = st.radio("View", ["Heatmap", "Rendered (LaTeX)"], horizontal=True, key="inspect_view")
if view == "Heatmap":
    st.html(
        trace_heatmap(
            [s.text for s in segments],
            scores,
            tooltips,
            scale="diverging" if shade == "sigma" else "sequential",
            answer_text=answer_text,
        )
    )
    st.caption("Hover a segment for its values; red lowered and green raised the value (σ), or darker = higher.")
else:
    for segment, score in zip(segments, scores, strict=True):
        colour = "green" if score > 0 else "red" if score < 0 else "gray"
        st.markdown(f":{colour}-badge[{segment.index + 1} · {SHADES[shade].split(':')[0]} {score:+.3f}] {segment.text}")

left, right = st.columns(2)
curves = {name: values for name, values in state_values.items()}
left.plotly_chart(
    value_curves(curves, title="Values at the states s1 … sK+1 (the last is the outcome R)"), key="inspect_curves"
)
uniform = uniform_credit(result.outcome, result.k)
right.plotly_chart(
    credit_bars(
        {"σ (this estimator)": result.sigma, "GRPO: R / K": uniform},
        title="Credit per segment: redistribution vs what GRPO gives",
    ),
    key="inspect_credit",
)

table = pd.DataFrame(result.rows(preview=80))
st.dataframe(table, hide_index=True, key="inspect_table")
st.download_button(
    "Download the segment table (CSV)",
    table.to_csv(index=False).encode(),
    file_name=f"{trace.short_id}-{result.segmentation.strategy}-k{result.k}.csv",
    mime="text/csv",
)

if analysis.segmenter is not None and analysis.segmenter.name == "hybrid" and result.segmentation.merge_history:
    with st.expander("Replay the hybrid segmentation (keyword pieces merged by lowest entropy)"):
        history = result.segmentation.merge_history
        step = st.slider("Merge step", 0, len(history), len(history), key="inspect_replay")
        replayed = replay(
            result.segmentation, analysis.context.segmenter_input(analysis.analyzer.scope_for(analysis.segmenter)), step
        )
        if step:
            merge = history[step - 1]
            st.caption(
                f"step {step}: merged pieces {merge.left + 1} and {merge.left + 2} (score {merge.score:.3f}); "
                f"{replayed.k} pieces remain"
            )
        else:
            st.caption(f"{replayed.k} keyword/newline pieces before any merge")
        st.html(
            trace_heatmap(
                [s.text for s in replayed.segments],
                [s.entropy_sum for s in replayed.segments],
                [{"entropy sum": s.entropy_sum, "tokens": s.n_tokens} for s in replayed.segments],
                scale="sequential",
            )
        )
