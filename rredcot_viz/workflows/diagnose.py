"""Evaluate first-error detectors on a step-labelled file, ProcessBench-style, and record the evaluation.

``eval-diagnosis`` and the Diagnose page's "Start an evaluation" both run ``run_evaluation``: the same
seeded sample of records, the same automatic references, the same trivial baselines beside the detectors,
and the same stored run, which the Diagnose page lists.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.processbench import Evaluation, Scores, baselines, evaluate
from rredcot_viz.engine import AnalysisConfig, Analyzer, BoundaryCache, PromptConfig
from rredcot_viz.errors import RredcotError
from rredcot_viz.paths import shared_data_dir
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.references import attach_references
from rredcot_viz.traces.trace import Trace

Progress = Callable[[str, int, int], None]  # (detector, done, total)


@dataclass
class EvaluationRequest:
    """What to evaluate: a file, which of its records, which detectors (with their settings)."""

    data: Path
    detectors: dict[str, dict[str, Any]]  # resolved detector name -> its options
    format: str = "auto"
    limit: int | None = None
    field_map: dict[str, str] = field(default_factory=dict)  # the file's field -> ours
    encoding: str = "utf-8"
    sample: int | None = None  # a seeded random subset, kept in file order
    sample_seed: int = 0
    references: str = "auto"  # a file to join references from by question, "auto" or "none"
    segmenter: str = "given"  # segment t = step t
    variant: str = "exact_sum"
    chat_template: bool = True


@dataclass
class EvaluationOutcome:
    split: str
    traces: list[Trace]
    evaluations: list[Evaluation]
    rows: list[dict[str, Any]]  # the detectors' rows, then the trivial baselines'
    notes: list[str] = field(default_factory=list)
    run_id: str | None = None

    @property
    def best(self) -> Evaluation:
        return max(self.evaluations, key=lambda e: -1.0 if e.scores.f1 is None else e.scores.f1)

    def baseline(self, name: str) -> Scores:
        return next(b for b in baselines(self.traces) if b.name == name)


def seeded_sample(traces: list[Trace], n: int | None, seed: int) -> list[Trace]:
    """``n`` records drawn with ``seed``, in file order (ProcessBench files list the erroneous samples first,
    so the first N alone would hold no correct ones)."""
    if not n or n >= len(traces):
        return traces
    chosen = np.random.default_rng(seed).choice(len(traces), n, replace=False)
    return [traces[i] for i in sorted(chosen)]


def auto_references(data: Path, traces: list[Trace], references: str = "auto") -> tuple[list[Trace], str | None]:
    """Join reference answers and solutions by question: from ``references``, or with "auto" from the GSM8K
    test set for a GSM8K-named file when it is present. Returns the traces and a note of what matched."""
    if references == "auto":
        candidate = shared_data_dir() / "gsm8k" / "test.jsonl"
        references = str(candidate) if "gsm8k" in data.name.lower() and candidate.is_file() else "none"
    if references == "none":
        return traces, None
    traces, matched = attach_references(traces, references)
    return traces, f"references: {matched} of {len(traces)} traces matched in {references}"


def load_request_traces(request: EvaluationRequest) -> tuple[list[Trace], list[str]]:
    """The request's labelled traces (with references where they can be found) and notes on how they were read."""
    report = import_file(
        request.data,
        request.format,
        request.limit,
        field_map=request.field_map,
        encoding=request.encoding,
        display_name=request.data.name,
    )
    traces = seeded_sample(report.traces, request.sample, request.sample_seed)
    if not traces:
        raise RredcotError(f"{request.data.name}: no traces could be read ({report.records_failed} records skipped)")
    traces, matched = auto_references(request.data, traces, request.references)
    notes = [
        f"{len(traces)} traces from {request.data.name} ({report.format}); {report.records_failed} records skipped"
    ]
    return traces, notes + ([matched] if matched else [])


def run_evaluation(lm: Any, request: EvaluationRequest, progress: Progress | None = None) -> EvaluationOutcome:
    """Every requested detector on the request's traces, with the trivial baselines' rows beside them."""
    traces, notes = load_request_traces(request)
    prompt = PromptConfig(chat_template=request.chat_template)
    config = AnalysisConfig(prompt=prompt, scope="reasoning", boundaries="states", variant=request.variant)
    # every trace stays in the score cache, so detectors that read the same values (min_sigma, value_drop) share them
    analyzer = Analyzer(lm, config, cache=BoundaryCache(max_contexts=len(traces) + 8))
    segmenter = segmenters.get(request.segmenter)()
    evaluations = []
    for name, options in request.detectors.items():
        report = None if progress is None else (lambda done, total, name=name: progress(name, done, total))
        evaluations.append(evaluate(detectors.get(name)(**options), analyzer, traces, segmenter, report))
    rows = [e.scores.row() for e in evaluations] + [b.row() for b in baselines(traces)]
    split = request.data.stem + (f" (random {len(traces)}, seed {request.sample_seed})" if request.sample else "")
    return EvaluationOutcome(split, traces, evaluations, rows, notes)


def store_evaluation(store: Any, lm: Any, outcome: EvaluationOutcome, request: EvaluationRequest) -> str:
    """Record the evaluation as a ``diagnosis`` run (the Diagnose page lists these); returns its run id."""
    run_id = f"diagnosis-{uuid.uuid4().hex[:10]}"
    store.put_run(run_id, "diagnosis", lm.info(), {"split": outcome.split, "detectors": request.detectors}, None)
    for evaluation in outcome.evaluations:
        payload = {
            "detector": evaluation.detector,
            "scores": evaluation.scores.row(),
            "predictions": evaluation.predictions,
            "labels": evaluation.labels,
            "n_steps": evaluation.n_steps,
            "trace_hashes": evaluation.trace_hashes,
            "errors": evaluation.errors[:50],
        }
        key = f"{run_id}:{evaluation.detector}"
        cost = {"seconds": evaluation.scores.seconds}
        store.put_result(
            key, "", "diagnosis", evaluation.detector, request.detectors[evaluation.detector], payload, cost
        )
    seconds = sum(e.scores.seconds for e in outcome.evaluations)
    store.finish_run(run_id, "done", {"split": outcome.split, "table": outcome.rows}, {"seconds": seconds})
    outcome.run_id = run_id
    return run_id


def f1_text(scores: Scores) -> str:
    return f"F1 n/a ({scores.f1_reason})" if scores.f1 is None else f"F1 {100 * scores.f1:.1f}%"
