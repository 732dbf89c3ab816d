"""The Inspect page's parts: the "what am I looking at" panel, the shaded trace and the merge replay."""

from __future__ import annotations

import numpy as np
import streamlit as st

from rredcot_viz.app import screen_path
from rredcot_viz.engine import AnalysisResult
from rredcot_viz.estimators.redistribution import last_segment_note
from rredcot_viz.figures import trace_heatmap
from rredcot_viz.figures.colors import shade_scale
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui.analysis import Analysis
from rredcot_viz.ui.shading import relative_switch

SHADES = {
    "sigma": "σ: credit this segment earned (value after minus before)",
    "Q_hat": "Q̂: estimated chance of ending right from here",
    "R_hat": "R̂: chance of the right answer if it stopped here",
    "v_hat": "v̂: how well the reference solution continues from here",
}


def what_am_i_looking_at() -> None:
    """One paragraph that says what the page shows, for someone who has not read the paper."""
    with st.expander("What am I looking at?"):
        st.markdown(
            "A reasoning trace is cut into segments. For each point between segments the model estimates how "
            "likely the trace is to end with the right answer from there (**Q̂**), from two parts: **R̂**, the "
            "chance it would give the right answer if it stopped now, and **v̂**, how naturally the reference "
            "solution continues from here. A segment's credit **σ** is how much it moved that estimate: green "
            "segments raised it, red ones lowered it, and the credits add up to the outcome."
        )
        st.page_link(screen_path("learn"), label="Learn the idea on a toy problem you control", icon="🎓")


def state_values(result: AnalysisResult) -> dict[str, np.ndarray]:
    """Q-hat and whichever of R-hat and v-hat the estimator produced, per state."""
    components = result.values.components
    return {"Q_hat": result.values.values, **{k: v for k, v in components.items() if k in ("R_hat", "v_hat")}}


def shaded_trace(result: AnalysisResult, trace: Trace) -> None:
    """The trace with each segment shaded by sigma or a state value, as a heatmap or typeset (LaTeX)."""
    values = state_values(result)
    segments = result.segmentation.segments
    available = ["sigma", *[k for k in ("Q_hat", "R_hat", "v_hat") if k in values]]
    shade = st.segmented_control("Shade by", available, default="sigma", format_func=SHADES.get, key="inspect_shade")
    shade = shade or "sigma"
    scores = result.sigma if shade == "sigma" else values[shade][: result.k]
    tooltips = [
        {**{name: float(v[s.index]) for name, v in values.items()}, "sigma": float(result.sigma[s.index])}
        for s in segments
    ]
    left, right = st.columns([1, 1])
    view = left.radio("View", ["Heatmap", "Rendered (LaTeX)"], horizontal=True, key="inspect_view")
    with right:
        relative = relative_switch("inspect_relative")
    kind = "diverging" if shade == "sigma" else "sequential"
    scale = shade_scale(scores, kind, relative=relative, quantity=SHADES[shade].split(":")[0])
    if view == "Heatmap":
        answer_text = trace.cot[segments[-1].char_span[1] :]
        st.html(trace_heatmap([s.text for s in segments], scores, tooltips, scale=scale, answer_text=answer_text))
        st.caption("Hover a segment for its values; red lowered and green raised the value (σ), or darker = higher.")
        if shade == "sigma" and (note := last_segment_note(result.values.values, result.variant)):
            st.caption(note)
        return
    st.caption(scale.describe())
    for segment, score in zip(segments, scores, strict=True):
        colour = (
            "gray" if not scale.tinted(score) else "blue" if kind == "sequential" else "green" if score > 0 else "red"
        )
        st.markdown(f":{colour}-badge[{segment.index + 1} · {SHADES[shade].split(':')[0]} {score:+.3f}] {segment.text}")


def merge_replay(analysis: Analysis) -> None:
    """A slider that replays a segmenter's merges (one that ``replays_merges``, when the analysis has them)."""
    result, segmenter = analysis.result, analysis.segmenter
    if segmenter is None or not segmenter.replays_merges or not result.segmentation.merge_history:
        return
    with st.expander(f"Replay the {segmenter.name} segmentation (pieces merged by lowest entropy)"):
        history = result.segmentation.merge_history
        step = st.slider("Merge step", 0, len(history), len(history), key="inspect_replay")
        scope = analysis.analyzer.scope_for(segmenter)
        replayed = segmenter.replay(result.segmentation, analysis.context.segmenter_input(scope), step)
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
                scale=shade_scale(
                    [s.entropy_sum for s in replayed.segments], "sequential", relative=True, quantity="entropy sum"
                ),
            )
        )
