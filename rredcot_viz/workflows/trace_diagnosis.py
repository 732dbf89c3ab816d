"""Diagnose one trace (the Diagnose page): every chosen first-error detector's verdict beside the value curve of
the richest estimator the trace can feed, and a segment edited and re-scored. ProcessBench-style evaluations of
the detectors on a labelled file are ``workflows.diagnose``'s."""

from __future__ import annotations

from dataclasses import dataclass

from rredcot_viz.diagnosis import Detector, FirstError
from rredcot_viz.diagnosis.capability import capability
from rredcot_viz.diagnosis.resample import EditResult, ResetConfig, edit_segment
from rredcot_viz.diagnosis.value_detectors import curve_estimator
from rredcot_viz.diagnosis.verdicts import cached_verdict
from rredcot_viz.engine import AnalysisResult, Analyzer
from rredcot_viz.errors import MissingReferenceError
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.base import R_HAT_ALONE
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.segmenters import Segment, Segmenter
from rredcot_viz.traces.trace import Trace


@dataclass
class TraceDiagnosis:
    """One trace under the chosen detectors: each verdict, what the trace lacks for the others, and the value
    curve of the richest estimator it can feed beside them."""

    segments: list[Segment]
    verdicts: dict[str, FirstError]  # by the detector's label (naming the estimator an "auto" detector used)
    lacking: dict[str, list[str]]  # detectors this trace cannot feed, with what it lacks (``traces.needs``)
    curve: AnalysisResult | None  # None: the trace has no outcome, so no value curve
    curve_estimator: str | None

    @property
    def curve_note(self) -> str | None:
        """Why the curve comes from a poorer estimator than the richest (what the trace lacks), or why none."""
        if self.curve_estimator is None:
            return "No value curve: this trace has no outcome label and no reference answer to check its answer."
        note = estimators.get(self.curve_estimator).fallback_note
        return f"Values from `{self.curve_estimator}`: {note}" if note else None


def detectors_lacking(trace: Trace, chosen: dict[str, Detector]) -> dict[str, list[str]]:
    """The chosen detectors ``trace`` cannot feed, with what it lacks (checked on its fields, no model)."""
    return {name: detector.missing(trace) for name, detector in chosen.items() if detector.missing(trace)}


def diagnose_trace(
    analyzer: Analyzer,
    trace: Trace,
    segmenter: Segmenter,
    chosen: dict[str, Detector],
    progress: ProgressFn | None = None,
) -> TraceDiagnosis:
    """Every chosen detector that ``trace`` can feed (verdicts from the store when seen before: a detector that
    samples is not asked again), and the value curve of the richest estimator the trace has."""
    lacking = detectors_lacking(trace, chosen)
    estimator_name = curve_estimator(trace)
    curve = analyzer.analyze(trace, segmenter, estimators.get(estimator_name)(), progress) if estimator_name else None
    analyzer.context(trace).score_stats()  # entropies for the segmenter
    segments = analyzer.segment(trace, segmenter).segments
    verdicts = {
        capability(detector, [trace]).label: cached_verdict(analyzer, trace, segmenter, detector, progress)
        for name, detector in chosen.items()
        if name not in lacking
    }
    return TraceDiagnosis(segments, verdicts, lacking, curve, estimator_name)


def edit_and_rescore(
    analyzer: Analyzer,
    trace: Trace,
    segmenter: Segmenter,
    index: int,
    new_text: str,
    config: ResetConfig,
) -> EditResult:
    """Segment ``index`` (1-based) replaced by ``new_text`` (off-policy), both traces' R-hat toward the reference
    answer and on-policy continuations after the edit. Without a reference answer it is refused before any model
    work: the edit drops the trace's correct/wrong label, and only a reference says whether the edited trace ends
    right (the trace's own answer would be a different target before and after the edit)."""
    if trace.reference_answer is None:
        raise MissingReferenceError(
            "re-scoring an edit needs a reference answer: the edit drops the trace's correct/wrong label, so only a "
            "reference can say whether the edited trace ends right"
        )
    estimator = estimators.get(R_HAT_ALONE)()
    return edit_segment(analyzer, trace, segmenter, index, new_text, estimator, config)
