"""The Diagnose page's parts: the detectors with their generated settings, their verdicts on the text, reset
resampling as a tree, and editing a segment by hand."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.attribution.trust import probed_trust
from rredcot_viz.diagnosis import Detector, FirstError, detectors
from rredcot_viz.diagnosis.resample import ResetConfig, reset_resample
from rredcot_viz.engine import AnalysisResult, Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.figures import reset_tree, trace_heatmap, value_curves
from rredcot_viz.figures.colors import ShadeScale
from rredcot_viz.jobs import Job
from rredcot_viz.segmenters import Segment, Segmenter
from rredcot_viz.traces.needs import describe
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import Rollout
from rredcot_viz.ui import resources
from rredcot_viz.ui.compare_views import trust_panel
from rredcot_viz.ui.jobs import JobTexts, StreamlitProgress, job_progress, start_job
from rredcot_viz.ui.method_controls import build, method_settings, summary
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.workflows.estimate import NOT_MEASURED, estimate_sampling
from rredcot_viz.workflows.trace_diagnosis import detectors_lacking, diagnose_trace, edit_and_rescore


def detector_choice() -> dict[str, Detector]:
    """The chosen detectors with their generated settings (those that sample are left out by default)."""
    names = detectors.names()
    chosen = st.multiselect(
        "Detectors",
        names,
        default=[n for n in names if "sampling" not in detectors.get(n).uses],
        key="diagnose_detectors",
        help="\n\n".join(f"**{n}**: {summary(detectors, n)}" for n in names),
    )
    values = method_settings({name: detectors.get(name).Config for name in chosen}, "diagnose")
    return {name: build(detectors.get(name), values[name]) for name in chosen}


def verdicts_view(
    analyzer: Analyzer, trace: Trace, segmenter: Segmenter, chosen: dict[str, Detector]
) -> tuple[list[Segment], dict[str, FirstError]]:
    """Each detector's verdict shaded on the text (a detector the trace cannot feed is skipped with what it
    lacks), the value curve of the richest estimator the trace has, and the verdict table."""
    for name, lacking in detectors_lacking(trace, chosen).items():
        st.warning(f"{name} cannot run on this trace: it needs {describe(lacking)}.")
    try:
        progress = StreamlitProgress("Running the detectors")
        diagnosis = diagnose_trace(analyzer, trace, segmenter, chosen, progress)
        progress.close()
    except RredcotError as error:
        st.error(str(error))
        st.stop()
    if diagnosis.curve_note:
        st.caption(diagnosis.curve_note)
    segments, verdicts = diagnosis.segments, diagnosis.verdicts
    _show_verdicts(trace, segments, verdicts, diagnosis.curve, diagnosis.curve_estimator)
    for label, verdict in verdicts.items():
        if "half_values" in verdict.evidence:  # Monte Carlo was drawn: how far it agrees with itself
            found = probed_trust(verdict.evidence)
            if found is None:
                st.caption(f"{label}: Monte Carlo's agreement with itself needs every state probed; turn off the "
                           "binary search to see it.")  # fmt: skip
            trust_panel(found)
    return segments, verdicts


def _show_verdicts(
    trace: Trace,
    segments: list[Segment],
    verdicts: dict[str, FirstError],
    estimate: AnalysisResult | None,
    estimator_name: str | None,
) -> None:
    flags = [sum(v.prediction == s.index for v in verdicts.values()) for s in segments]
    tips = [
        {
            **{f"{n} score": float(v.scores[s.index]) for n, v in verdicts.items()},
            **({"sigma": float(estimate.sigma[s.index])} if estimate else {}),
            "detectors flagging": int(flags[s.index]),
        }
        for s in segments
    ]
    left, right = st.columns([3, 2])
    answer_text = trace.cot[segments[-1].char_span[1] :]
    counts = ShadeScale("sequential", 0.0, float(max(len(verdicts), 1)), 0.5, quantity="detectors flagging")
    left.html(trace_heatmap([s.text for s in segments], flags, tips, scale=counts, answer_text=answer_text))
    left.caption("Darker = flagged as the first error by more detectors. Hover for every detector's score.")
    if estimate:
        right.plotly_chart(
            value_curves({f"Q̂ ({estimator_name})": estimate.values.values}, title="Value along the trace"),
            key="diagnose_curve",
        )
    rows = [  # one text column: segment numbers and "none" (a mixed column is not Arrow-serialisable)
        {"detector": n, "first error (segment)": str(v.segment or "none"), "abstained": v.abstained}
        | {"seconds": round(v.cost.seconds, 1), "source": v.cost.source(v.cached, v.computed_at)}
        for n, v in verdicts.items()
    ]
    if trace.first_error is not None:
        labelled = str(trace.first_error + 1) if trace.first_error >= 0 else "none"
        rows.append({"detector": "label", "first error (segment)": labelled, "abstained": False, "seconds": 0.0,
                     "source": "the trace's label"})  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="diagnose_verdicts")


FINISHED_BECAUSE = {"eos": "ended", "stop": "reached a stop text", "answer": "stated an answer"}


def finish_words(rollout: Rollout, cap: int) -> str:
    """Why a sampled suffix ended, in words."""
    return FINISHED_BECAUSE.get(rollout.finish_reason, f"hit the {cap}-token cap")


def reset_panel(
    analyzer: Analyzer, trace: Trace, segmenter: Segmenter, segments: list[Segment], verdicts: dict[str, FirstError]
) -> tuple[int, ResetConfig]:
    """Reset before a segment (a verdict's by default) and sample suffixes in the background (with an estimate
    of its time first; asking again joins the running job); the outcome as a tree. Returns the segment and the
    resampling settings (the edit panel reuses them)."""
    st.subheader("Reset and resample")
    default_segment = next((v.segment for v in verdicts.values() if v.segment), 1)
    segment = int(
        st.number_input(
            "Reset before segment",
            1,
            len(segments),
            int(default_segment),
            key="diagnose_segment",
            help="Keeps segments before it and samples new continuations (defaults to a verdict)",
        )
    )
    config = build(ResetConfig, settings_form(ResetConfig, "diagnose_reset", more="More resampling settings"))
    jobs = resources.jobs()
    key = f"reset:{trace.content_hash}:{segmenter.config!r}:{segment}:{config!r}"
    found = jobs.latest(key)
    st.session_state["reset_job"] = found.id if found is not None else ""

    def run(job: Job) -> None:
        job.note("sampling suffixes")
        reset_resample(analyzer, trace, segmenter, segment, config)

    left, right = st.columns([1, 3])
    clicked = left.button("Resample from here", key="diagnose_resample")
    guess = estimate_sampling(analyzer.lm, config.suffixes * config.max_new_tokens, resources.store())
    right.caption(f"Time here: {guess.line()}." if guess else NOT_MEASURED)
    if clicked:
        label = f"Reset of “{trace.display_name}” before segment {segment}"
        start_job("reset_job", label, run, kind="reset", key=key, unit="reset")

    def rerun_when_done(job: Job) -> None:
        if job.status == "done":
            st.rerun(scope="app")

    texts = JobTexts(cancelled="Cancelled; no suffix of the call in progress was kept.")
    job_progress("reset_job", texts, on_end=rerun_when_done)
    job = jobs.get(st.session_state["reset_job"])
    if job is None or job.status != "done":
        return segment, config
    try:  # the suffixes are stored: this reads them back, with no model call
        reset = reset_resample(analyzer, trace, segmenter, segment, config)
    except RredcotError as error:
        st.error(str(error))
        return segment, config
    low, high = reset.interval
    st.caption(
        f"Reset before segment {reset.segment} of {reset.k}: {reset.successes}/{len(reset.suffixes)} suffixes "
        f"reach the reference answer (Wilson 95% [{low:.2f}, {high:.2f}]); the original trace "
        f"{'succeeded' if trace.outcome else 'failed'}."
    )
    branches = [(f"seed {r.seed}: {r.answer or 'no answer'}", r.correct, " ".join(r.text.split())[:300])
                for r in reset.suffixes]  # fmt: skip
    root = f"segments 1–{reset.segment - 1}" if reset.segment > 1 else "question only"
    st.plotly_chart(reset_tree(root, branches, (str(trace.answer), bool(trace.outcome))), key="diagnose_tree")
    for r in reset.suffixes:
        answer = f"answer {r.answer}" if r.answer else "no answer"
        with st.expander(
            f"{'✅' if r.correct else '❌'} seed {r.seed}: {answer} ({finish_words(r, config.max_new_tokens)})"
        ):
            st.text(reset.prefix_text[-400:] + "⟨reset⟩" + r.text)
    return segment, config


def edit_panel(
    analyzer: Analyzer, trace: Trace, segmenter: Segmenter, segments: list[Segment], segment: int, config: ResetConfig
) -> None:
    """Replace a segment's text by hand (off-policy), re-score, and sample on-policy continuations after it."""
    with st.expander("Edit a segment by hand (off-policy) and re-score"):
        index = int(st.number_input("Segment to replace", 1, len(segments), segment, key="diagnose_edit_index"))
        new_text = st.text_area("Replacement text", segments[index - 1].text, key="diagnose_edit_text")
        if not st.button("Re-score the edited trace", key="diagnose_edit"):
            return
        try:
            edited = edit_and_rescore(analyzer, trace, segmenter, index, new_text, config)
        except RredcotError as error:
            st.error(str(error))
            return
        curves = {"R̂ original": edited.original.values.values, "R̂ edited": edited.edited.values.values}
        st.plotly_chart(
            value_curves(curves, title="Answer-now probability before and after the edit"), key="diagnose_edit_curve"
        )
        correct = sum(r.correct for r in edited.continuations)
        st.caption(
            f"On-policy continuations after the edited segment: {correct}/{len(edited.continuations)} "
            "reach the reference answer."
        )
