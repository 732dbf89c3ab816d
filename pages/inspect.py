"""Inspect: one trace, segmented, with its state values and redistributed rewards shaded over the text."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators.coupling import uniform_credit
from rredcot_viz.figures import credit_bars, trace_heatmap, value_curves
from rredcot_viz.segmenters.hybrid import replay
from rredcot_viz.ui import resources, widgets

SHADES = {"sigma": "σ (redistributed reward)", "Q_hat": "Q̂ (value)", "R_hat": "R̂ (answer now)", "v_hat": "v̂ (continue)"}

config = widgets.model_picker()
trace = widgets.trace_picker()
st.title("Inspect")
widgets.model_warning(config)
if trace is None:
    st.stop()

st.markdown(f"**Question.** {trace.question}")
col_a, col_b, col_c = st.columns(3)
col_a.metric("Trace answer", str(trace.answer))
col_b.metric("Reference answer", str(trace.reference_answer))
col_c.metric("Outcome R", {1.0: "1 (correct)", 0.0: "0 (wrong)"}.get(trace.outcome, "unknown"))

segmenter = widgets.segmentation_controls("inspect", trace)
estimator, analysis_config = widgets.estimator_controls("inspect")

try:
    analyzer = resources.analyzer(config, analysis_config)
    context = analyzer.context(trace)
    first_time = not context.has_stats
    progress = widgets.StreamlitProgress("Scoring every candidate boundary once (later settings are instant)")
    result = analyzer.analyze(trace, segmenter, estimator, progress=progress)
    progress.close()
except RredcotError as error:
    st.error(str(error))
    st.stop()

segments = result.segmentation.segments
components = result.values.components
state_values = {"Q_hat": result.values.values, **{k: v for k, v in components.items() if k in ("R_hat", "v_hat")}}
calls = (
    "no model calls (from the cache)"
    if result.model_calls == 0
    else (f"{result.model_calls} model call: {result.cost.tokens_processed} tokens in {result.cost.seconds:.1f} s")
)
st.caption(f"K = {result.k} segments · {calls}" + ("" if not first_time else " · first analysis of this trace"))
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
        st.markdown(f":{colour}-badge[{segment.index + 1} · {SHADES[shade].split()[0]} {score:+.3f}] {segment.text}")

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
    file_name=f"{trace.short_id}-{segmenter.name}-k{result.k}.csv",
    mime="text/csv",
)

if segmenter.name == "hybrid" and result.segmentation.merge_history:
    with st.expander("Replay the hybrid segmentation (keyword pieces merged by lowest entropy)"):
        history = result.segmentation.merge_history
        step = st.slider("Merge step", 0, len(history), len(history), key="inspect_replay")
        replayed = replay(result.segmentation, context.segmenter_input(analyzer.scope_for(segmenter)), step)
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
