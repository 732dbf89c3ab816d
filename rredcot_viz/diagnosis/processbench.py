"""The ProcessBench evaluation (METHOD.md §8.2, QwenLM/ProcessBench ``code/run_eval.py``).

A prediction counts only on exact match with the label (0-based first wrong step, -1 = all correct); an
abstention counts as wrong. Erroneous and correct samples are split by the label, never by
``final_answer_correct``. F1 is the harmonic mean of the two accuracies. The trivial baselines (always
"no error", always the first step, always the last step, a uniformly random step) are scored alongside.
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
from rredcot_viz.traces.trace import Trace


@dataclass
class Scores:
    name: str
    n: int
    n_error: int
    n_correct: int
    acc_error: float
    acc_correct: float
    f1: float
    seconds: float = 0.0
    failures: int = 0  # traces the detector could not run on (counted as wrong)

    def row(self) -> dict[str, Any]:
        return {
            "detector": self.name,
            "n": self.n,
            "acc_erroneous_%": round(100 * self.acc_error, 1),
            "acc_correct_%": round(100 * self.acc_correct, 1),
            "F1_%": round(100 * self.f1, 1),
            "seconds": round(self.seconds, 1),
            "failures": self.failures,
        }


def f1_score(acc_error: float, acc_correct: float) -> float:
    """>>> round(f1_score(0.5, 0.8), 4)
    0.6154"""
    total = acc_error + acc_correct
    return 0.0 if total == 0 else 2 * acc_error * acc_correct / total


def score(name: str, predictions: list[int | None], labels: list[int], seconds: float = 0.0) -> Scores:
    """ProcessBench accuracies and F1; ``None`` (an abstention or a failure) never matches."""
    if len(predictions) != len(labels):
        raise ValueError(f"{len(predictions)} predictions for {len(labels)} labels")
    pairs = list(zip(predictions, labels, strict=True))
    errors = [(p, label) for p, label in pairs if label != NO_ERROR]
    corrects = [(p, label) for p, label in pairs if label == NO_ERROR]
    acc_error = sum(p == label for p, label in errors) / len(errors) if errors else 0.0
    acc_correct = sum(p == NO_ERROR for p, _ in corrects) / len(corrects) if corrects else 0.0
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
