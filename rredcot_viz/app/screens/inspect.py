"""Inspect: one trace, segmented, with its state values and redistributed rewards shaded over the text."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.attribution.trust import own_trust
from rredcot_viz.estimators.coupling import uniform_credit
from rredcot_viz.figures import credit_bars, value_curves
from rredcot_viz.ui.analysis import live_analysis, recorded_analysis
from rredcot_viz.ui.compare_views import trust_panel
from rredcot_viz.ui.inspect_views import merge_replay, shaded_trace, state_values, what_am_i_looking_at
from rredcot_viz.ui.links import sync_view
from rredcot_viz.ui.pickers import model_picker, trace_picker
from rredcot_viz.ui.share import inspect_download
from rredcot_viz.ui.tables import table_with_download

sync_view("inspect")
config = model_picker()
st.title("Inspect")
trace = trace_picker()
what_am_i_looking_at()
if trace is None:
    st.stop()

st.markdown(f"**Question.** {trace.question}")
col_a, col_b, col_c = st.columns(3)
col_a.metric("Trace answer", str(trace.answer))
col_b.metric("Reference answer", str(trace.reference_answer))
col_c.metric("Outcome R", {1.0: "1 (correct)", 0.0: "0 (wrong)"}.get(trace.outcome, "unknown"))

analysis = recorded_analysis("inspect", trace) or live_analysis("inspect", config, trace)
result = analysis.result
st.caption(f"K = {result.k} segments · {analysis.cost_caption}")
for note in analysis.notes:
    st.caption(note)
for note in result.warnings + result.values.notes:
    st.info(note)

col_sum, col_r, col_variant = st.columns(3)
col_sum.metric("Σσ", f"{result.sigma.sum():+.4f}")
col_r.metric("Outcome R" if trace.outcome is not None else "R (its own answer, reached)", f"{result.outcome:g}")
col_variant.metric("Variant", result.variant, help="exact_sum forces Σσ = R; difference gives Σσ = R − Q̂₁")
shaded_trace(result, trace)
trust_panel(own_trust(result.values, result.sigma))

left, right = st.columns(2)
left.plotly_chart(
    value_curves(state_values(result), title="Values at the states s1 … sK+1 (the last is the outcome R)"),
    key="inspect_curves",
)
right.plotly_chart(
    credit_bars(
        {"σ (this estimator)": result.sigma, "GRPO: R / K": uniform_credit(result.outcome, result.k)},
        title="Credit per segment: redistribution vs what GRPO gives",
    ),
    key="inspect_credit",
)
table_with_download(
    pd.DataFrame(result.rows(preview=80)),
    "Download the segment table (CSV)",
    f"{trace.short_id}-{result.segmentation.strategy}-k{result.k}.csv",
    key="inspect_table",
    download=pd.DataFrame([{**row, **analysis.about} for row in result.rows(preview=None)]),
)
inspect_download(analysis)
merge_replay(analysis)
