"""The ProcessBench evaluation (METHOD.md §8.2, QwenLM/ProcessBench ``code/run_eval.py``).

A prediction counts only on exact match with the label (0-based first wrong step, -1 = all correct); an
abstention counts as wrong. Erroneous and correct samples are split by the label, never by
``final_answer_correct``. F1 is the harmonic mean of the two accuracies, undefined ("n/a") when a class is
empty (not 0: the accuracy of an empty class is not 0); each accuracy comes with its Wilson 95% interval.
The trivial baselines (always "no error", always the first step, always the last step, a uniformly random
step) are scored alongside.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector
from rredcot_viz.diagnosis.verdicts import confusion_matrix
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.stats import wilson_interval
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
    failures: int = 0  # traces the detector could not run on (counted as wrong)
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
            "failures": self.failures,
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
        failures,
        hits_error,
        hits_correct,
    )


def baselines(traces: list[Trace], seed: int = 0) -> list[Scores]:
    labels = [t.first_error for t in traces]
    n_steps = [len(t.steps) for t in traces]
    rng = np.random.default_rng(seed)
    return [
        score("always_no_error", [NO_ERROR] * len(traces), labels),
        score("always_first", [0] * len(traces), labels),
        score("always_last", [n - 1 for n in n_steps], labels),
        score("uniform_random", [int(rng.integers(0, n)) for n in n_steps], labels),
    ]


@dataclass
class Evaluation:
    detector: str
    scores: Scores
    predictions: list[int | None]
    labels: list[int]
    n_steps: list[int]
    trace_hashes: list[str]
    errors: list[str] = field(default_factory=list)

    def confusion(self) -> np.ndarray:
        return confusion_matrix(self.predictions, self.labels, self.n_steps)


def evaluate(
    detector: Detector, analyzer: Analyzer, traces: list[Trace], segmenter: Segmenter, progress: Any = None
) -> Evaluation:
    """Run ``detector`` on labelled traces (``first_error`` set) and score it ProcessBench-style."""
    unlabelled = [t.trace_id for t in traces if t.first_error is None or t.steps is None]
    if unlabelled:
        raise RredcotError(
            f"{len(unlabelled)} traces have no first-error label or steps (e.g. {unlabelled[0]}); "
            "evaluate on ProcessBench-format data"
        )
    started = time.perf_counter()
    predictions: list[int | None] = []
    errors: list[str] = []
    for trace, verdict in zip(traces, detector.detect_many(analyzer, traces, segmenter, progress), strict=True):
        if isinstance(verdict, RredcotError):
            predictions.append(None)
            errors.append(f"{trace.trace_id}: {verdict}")
        else:
            predictions.append(None if verdict.abstained else verdict.prediction)
    labels = [t.first_error for t in traces]
    scores = score(detector.name, predictions, labels, time.perf_counter() - started)
    return Evaluation(
        detector.name,
        scores,
        predictions,
        labels,
        [len(t.steps) for t in traces],
        [t.content_hash for t in traces],
        errors,
    )
