"""The ProcessBench evaluation (docs/method.md §8.2, QwenLM/ProcessBench ``code/run_eval.py``).

A prediction counts only on exact match with the label (0-based first wrong step, -1 = all correct); an
abstention counts as wrong. Erroneous and correct samples are split by the label, never by
``final_answer_correct``. F1 is the harmonic mean of the two accuracies, undefined ("n/a") when a class is
empty (not 0: the accuracy of an empty class is not 0); each accuracy comes with its Wilson 95% interval.
The trivial baselines (always "no error", always the first step, always the last step, a uniformly random
step, and with outcome labels "no error if the answer is right, else the first / last / a random step") are
scored alongside.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector
from rredcot_viz.diagnosis.capability import capability
from rredcot_viz.diagnosis.self_localize import PARSE_FALLBACKS
from rredcot_viz.diagnosis.verdicts import confusion_matrix
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.segmenters.base import Segmentation, Segmenter
from rredcot_viz.stats import wilson_interval
from rredcot_viz.traces.needs import describe
from rredcot_viz.traces.trace import Trace


@dataclass
class Scores:
    name: str
    n: int
    n_error: int
    n_correct: int
    acc_error: float | None  # None: no erroneous sample, the accuracy is undefined
    acc_correct: float | None  # None: no correct sample
    f1: float | None  # None when a class is empty: the harmonic mean of an undefined accuracy is undefined
    seconds: float = 0.0
    failures: int = 0  # traces without a verdict (not runnable, failed or abstained; counted as wrong)
    not_runnable: int = 0  # of those, traces that lack what the detector needs (known before any model work)
    hits_error: int = 0
    hits_correct: int = 0

    @property
    def f1_reason(self) -> str:
        """Why F1 is n/a ("" when it is defined)."""
        empty = [name for name, count in (("erroneous", self.n_error), ("correct", self.n_correct)) if count == 0]
        return f"no {' and no '.join(empty)} samples" if empty else ""

    def row(self) -> dict[str, Any]:
        def percent(value: float | None) -> float | str:
            return "n/a" if value is None else round(100 * value, 1)

        def interval(hits: int, n: int) -> str:
            low, high = wilson_interval(hits, n)
            return "n/a" if n == 0 else f"{100 * low:.0f}-{100 * high:.0f}"

        return {
            "detector": self.name,
            "n": self.n,
            "acc_erroneous_%": percent(self.acc_error),
            "erroneous_95%_CI": interval(self.hits_error, self.n_error),
            "acc_correct_%": percent(self.acc_correct),
            "correct_95%_CI": interval(self.hits_correct, self.n_correct),
            "F1_%": percent(self.f1) if self.f1 is not None else f"n/a ({self.f1_reason})",
            "seconds": round(self.seconds, 1),
            "no verdict": self.failures,
            "not runnable": self.not_runnable,
        }


def f1_score(acc_error: float | None, acc_correct: float | None) -> float | None:
    """The harmonic mean of the two accuracies; None when either is undefined (an empty class).

    >>> round(f1_score(0.5, 0.8), 4)
    0.6154"""
    if acc_error is None or acc_correct is None:
        return None
    total = acc_error + acc_correct
    return 0.0 if total == 0 else 2 * acc_error * acc_correct / total


def score(name: str, predictions: list[int | None], labels: list[int], seconds: float = 0.0) -> Scores:
    """ProcessBench accuracies and F1; ``None`` (an abstention or a failure) never matches."""
    if len(predictions) != len(labels):
        raise ValueError(f"{len(predictions)} predictions for {len(labels)} labels")
    pairs = list(zip(predictions, labels, strict=True))
    errors = [(p, label) for p, label in pairs if label != NO_ERROR]
    corrects = [(p, label) for p, label in pairs if label == NO_ERROR]
    hits_error = sum(p == label for p, label in errors)
    hits_correct = sum(p == NO_ERROR for p, _ in corrects)
    acc_error = hits_error / len(errors) if errors else None
    acc_correct = hits_correct / len(corrects) if corrects else None
    failures = sum(p is None for p in predictions)
    return Scores(
        name,
        len(labels),
        len(errors),
        len(corrects),
        acc_error,
        acc_correct,
        f1_score(acc_error, acc_correct),
        seconds,
        failures=failures,
        hits_error=hits_error,
        hits_correct=hits_correct,
    )


def baseline_predictions(traces: list[Trace], seed: int = 0) -> dict[str, list[int]]:
    """Each trivial baseline's predictions; where every trace has an outcome label, also the ``outcome_then_*``
    controls ("no error" when the final answer is right, else a fixed or random step): the floor for any
    detector that reads the outcome (the ``own_answer`` values, ``loo`` with the own target)."""
    n_steps = [len(t.steps) for t in traces]
    rng = np.random.default_rng(seed)
    guesses = {
        "first": [0] * len(traces),
        "last": [n - 1 for n in n_steps],
        "random": [int(rng.integers(0, n)) for n in n_steps],
    }
    predictions = {"always_no_error": [NO_ERROR] * len(traces), "always_first": guesses["first"]}
    predictions |= {"always_last": guesses["last"], "uniform_random": guesses["random"]}
    outcomes = [t.outcome for t in traces]
    if traces and all(o is not None for o in outcomes):
        right = [o >= 0.5 for o in outcomes]
        for name, guess in guesses.items():
            predictions[f"outcome_then_{name}"] = [NO_ERROR if ok else g for ok, g in zip(right, guess, strict=True)]
    return predictions


def baselines(traces: list[Trace], seed: int = 0) -> list[Scores]:
    """The trivial baselines' scores (``baseline_predictions``)."""
    labels = [t.first_error for t in traces]
    return [score(name, guess, labels) for name, guess in baseline_predictions(traces, seed).items()]


@dataclass
class Evaluation:
    detector: str  # the row's name: the method with its mode, e.g. ``min_sigma[answer_only]``
    scores: Scores
    predictions: list[int | None]
    labels: list[int]
    n_steps: list[int]
    trace_hashes: list[str]
    errors: list[str] = field(default_factory=list)
    method: str = ""  # the registered detector name the row came from
    evidence: list[dict[str, Any] | None] = field(default_factory=list)  # per trace: the verdict's evidence
    notes: list[str] = field(default_factory=list)  # fallbacks counted over the verdicts (``fallback_notes``)

    def confusion(self) -> np.ndarray:
        return confusion_matrix(self.predictions, self.labels, self.n_steps)


def to_step(trace: Trace, segmentation: Segmentation, prediction: int) -> int:
    """A segment-level prediction as the dataset's step (docs/method.md: the step that contains the segment's first
    non-blank character), so F1 is comparable across segmenters; "no error" stays -1."""
    if prediction == NO_ERROR:
        return NO_ERROR
    start, end = segmentation.segments[prediction].char_span
    text = trace.cot[start:end]
    first = start + (len(text) - len(text.lstrip()))
    spans = trace.step_spans()
    return next((i for i, (low, high) in enumerate(spans) if low <= first < high), len(spans) - 1)


def evaluate(
    detector: Detector, analyzer: Analyzer, traces: list[Trace], segmenter: Segmenter, progress: Any = None
) -> Evaluation:
    """Run ``detector`` on the labelled traces (``first_error`` set) it can run on (``capability``; the others
    count as misses, with what they lack) and score it ProcessBench-style against every trace's label.
    Predictions of any segmenter are mapped onto the dataset's steps (``to_step``)."""
    unlabelled = [t.trace_id for t in traces if t.first_error is None or t.steps is None]
    if unlabelled:
        raise RredcotError(
            f"{len(unlabelled)} traces have no first-error label or steps (e.g. {unlabelled[0]}); "
            "evaluate on ProcessBench-format data"
        )
    report = capability(detector, traces)
    started = time.perf_counter()
    predictions: list[int | None] = [None] * len(traces)
    evidence: list[dict[str, Any] | None] = [None] * len(traces)
    errors = [
        f"{t.trace_id or t.short_id}: not run, lacks {describe(detector.missing(t))}"
        for t in traces
        if detector.missing(t)
    ]
    chosen = [traces[i] for i in report.runnable]
    verdicts = detector.detect_many(analyzer, chosen, segmenter, progress) if chosen else []
    for index, trace, verdict in zip(report.runnable, chosen, verdicts, strict=True):
        if isinstance(verdict, RredcotError):
            errors.append(f"{trace.trace_id or trace.short_id}: {verdict}")
        else:
            evidence[index] = verdict.evidence
            if not verdict.abstained:
                predictions[index] = to_step(trace, analyzer.segment(trace, segmenter), verdict.prediction)
    labels = [t.first_error for t in traces]
    scores = score(report.label, predictions, labels, time.perf_counter() - started)
    scores.not_runnable = len(traces) - len(report.runnable)
    return Evaluation(
        report.label,
        scores,
        predictions,
        labels,
        [len(t.steps) for t in traces],
        [t.content_hash for t in traces],
        errors,
        method=detector.name,
        evidence=evidence,
        notes=fallback_notes(report.label, evidence),
    )


def fallback_notes(label: str, evidence: list[dict[str, Any] | None]) -> list[str]:
    """How many verdicts a detector reached by a fallback rather than by reading the model (the self-localiser's
    replies that named no step), so a row built on defaults says so."""
    parsed = [e["parsed"] for e in evidence if e is not None and "parsed" in e]
    fallbacks = [p for p in parsed if p in PARSE_FALLBACKS]
    if not fallbacks:
        return []
    return [
        f"{label}: {len(fallbacks)} of {len(parsed)} replies named no step and were read by the fallback rule "
        "(an empty reply: the middle step; otherwise step 1)"
    ]
