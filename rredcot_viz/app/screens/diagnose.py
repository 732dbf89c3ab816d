"""Diagnose: where did a failed trace go wrong, how sure are we, and what if it had continued differently?"""

from __future__ import annotations

import streamlit as st

from rredcot_viz.segmenters import starting_segmenter
from rredcot_viz.ui import resources
from rredcot_viz.ui.diagnose_views import detector_choice, edit_panel, reset_panel, verdicts_view
from rredcot_viz.ui.evaluation_panel import evaluation_panel
from rredcot_viz.ui.links import sync_view
from rredcot_viz.ui.method_controls import segmenter_picker, variant_control
from rredcot_viz.ui.pickers import model_picker, model_warning, trace_picker
from rredcot_viz.ui.share import diagnose_download

sync_view("diagnose")
config = model_picker()
st.title("Diagnose")
failed_only = st.sidebar.toggle("Failed traces only", value=True, key="diagnose_failed_only")
trace = trace_picker(only_failed=failed_only)
model_warning(config)
if trace is None:
    st.stop()
if trace.outcome != 0.0:
    st.info(
        f"This trace is not a failed one (outcome {trace.outcome}); detectors still run, but a correct trace ideally "
        "has no first error."
    )
st.markdown(f"**Question.** {trace.question}  \n**Answer** {trace.answer} · **reference** {trace.reference_answer}")
segmenter = segmenter_picker("diagnose", trace, default=starting_segmenter(bool(trace.steps)))
analyzer = resources.analyzer(config, variant_control("diagnose"))
segments, verdicts = verdicts_view(analyzer, trace, segmenter, detector_choice())
diagnose_download(analyzer, trace, segmenter, segments, verdicts)
segment, reset_config = reset_panel(analyzer, trace, segmenter, segments, verdicts)
edit_panel(analyzer, trace, segmenter, segments, segment, reset_config)
evaluation_panel(config)
