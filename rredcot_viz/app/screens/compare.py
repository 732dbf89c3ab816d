"""Compare: RREDCoT against Monte Carlo rollouts and attribution methods on the same segments."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.attribution.agreement import metrics
from rredcot_viz.errors import RredcotError
from rredcot_viz.figures import correlation_heatmap, method_heatmap, scatter, value_curves
from rredcot_viz.ui import resources
from rredcot_viz.ui.compare_views import (
    DEFAULT_METRIC,
    cost_frame,
    cost_notes,
    method_choice,
    method_options,
    sampled,
    sampling_panels,
    trust_panel,
)
from rredcot_viz.ui.jobs import StreamlitProgress
from rredcot_viz.ui.links import sync_view
from rredcot_viz.ui.method_controls import segmenter_picker, variant_control
from rredcot_viz.ui.pickers import model_picker, model_warning, trace_picker, trace_text_input
from rredcot_viz.ui.probe_views import probe_fit_panel, probe_panel
from rredcot_viz.ui.shading import relative_switch
from rredcot_viz.ui.share import compare_download
from rredcot_viz.ui.tables import table_with_download, with_provenance
from rredcot_viz.workflows.compare import compare

sync_view("compare")
config = model_picker()
st.title("Compare")
trace = trace_picker()
model_warning(config)
if trace is None:
    st.stop()
st.markdown(f"**Question.** {trace.question}  \n**Answer** {trace.answer} · **reference** {trace.reference_answer}")
segmenter = segmenter_picker("compare", trace, text_input=trace_text_input(config, trace))
analyzer = resources.analyzer(config, variant_control("compare"))
methods = method_choice(trace, segmenter)
methods = probe_panel(analyzer, methods)  # the model's value probe, or how to fit one
options = method_options(methods)
sampling = sampled(methods)  # each runs as a background job from its own panel
drawn = sampling_panels(analyzer, trace, segmenter, methods)  # the options of those whose rollouts are drawn
probe_fit_panel(analyzer, segmenter)
options = {**options, **drawn}
selected = [m for m in methods if m not in sampling or m in drawn]
if not selected:
    st.stop()

try:
    progress = StreamlitProgress("Running the selected methods")
    comparison = compare(
        analyzer,
        trace,
        segmenter,
        selected,
        options,
        {name: progress for name in selected},
    )
    progress.close()
except RredcotError as error:
    st.error(str(error))
    st.stop()

scores = comparison.scores()
relative = relative_switch("compare_relative", "each method's largest |value|")
st.plotly_chart(method_heatmap(scores, relative=relative), key="compare_heatmap")
trust_panel(comparison.trust())
names = metrics.names()
metric = st.radio("Agreement", names, index=names.index(DEFAULT_METRIC), horizontal=True, key="compare_metric")
left, right = st.columns(2)
names, matrix = comparison.matrix(metric)
left.plotly_chart(correlation_heatmap(names, matrix, metric), key="compare_matrix")
if len(names) >= 2:
    x = right.selectbox("x", names, index=0, key="compare_x")
    y = right.selectbox("y", names, index=1, key="compare_y")
    right.plotly_chart(scatter(scores[x], scores[y], x, y), key="compare_scatter")

curves = {name: result.values for name, result in comparison.methods.items() if result.values is not None}
bands = {name: result.intervals["V_mc"] for name, result in comparison.methods.items() if "V_mc" in result.intervals}
if curves:
    title = "Value curves (Monte Carlo with Wilson 95% intervals)" if bands else "Value curves of the estimators"
    st.plotly_chart(value_curves(curves, bands, title), key="compare_curves")
st.dataframe(cost_frame(comparison), hide_index=True, key="compare_cost")
for note in cost_notes(comparison):
    st.caption(note)
table_with_download(
    pd.DataFrame(comparison.rows(80)),
    "Download per-segment scores (CSV)",
    f"{trace.short_id}-compare.csv",
    key="compare_table",
    download=with_provenance(comparison.rows(None), analyzer, segmenter, {"methods": options}),
)
compare_download(comparison, analyzer, segmenter, options, metric)
