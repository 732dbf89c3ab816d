"""Evaluate first-error detectors on a step-labelled file, ProcessBench-style, and record the evaluation (one
trace's diagnosis is ``workflows.trace_diagnosis``'s).

``eval-diagnosis`` and the Diagnose page's "Start an evaluation" both run ``run_evaluation``: the same
seeded sample of records, the same automatic references, the same trivial baselines beside the detectors,
and the same stored run, which the Diagnose page lists. ``EvaluationRecord`` records the run as it goes (each
detector's result as soon as it finishes), so a timeout, a lock or Ctrl-C loses at most the detector running.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rredcot_viz.diagnosis import Detector, detectors
from rredcot_viz.diagnosis.capability import Capability, check_all
from rredcot_viz.diagnosis.processbench import Evaluation, Scores, baselines, evaluate
from rredcot_viz.diagnosis.step_verifier import StepVerifier, calibrate_threshold
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.jobs import Cancelled
from rredcot_viz.model.backends import Sampler
from rredcot_viz.paths import shared_data_dir
from rredcot_viz.scoring import BoundaryCache, PromptConfig
from rredcot_viz.segmenters import segmenters, starting_segmenter, steps_segmenter
from rredcot_viz.settings import Settings, setting
from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.references import attach_references
from rredcot_viz.traces.trace import Trace

if TYPE_CHECKING:
    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.store import Store

Progress = Callable[[str, int, int], None]  # (detector, done, total)


@dataclass(frozen=True)
class RecordSelection(Settings):
    """Which records of a labelled file an evaluation reads, how they are segmented, and what happens when a
    detector cannot run on some of them (the CLI's options and the Diagnose page's form are generated from it)."""

    sample: int | None = setting(None, "evaluate a seeded random subset of N records, kept in file order "
                                 "(ProcessBench files list the erroneous records first, so the first N alone hold "
                                 "no correct ones); none: every record", low=1)  # fmt: skip
    sample_seed: int = setting(0, "seed of the sample", low=0)
    balanced: bool = setting(False, "with a sample: equal numbers of erroneous and correct records")
    segmenter: str = setting(starting_segmenter(has_steps=True), "how records are segmented; other segmenters' "
                             "predictions are mapped onto the steps (given: segment t = step t)",
                             choices=segmenters.names)  # fmt: skip
    strict: bool = setting(False, "stop before any model work when a detector cannot run on every record (off: "
                           "run each detector on the records it can run on; the others count as misses)")  # fmt: skip


@dataclass
class EvaluationRequest:
    """What to evaluate: a file, which of its records, which detectors (with their settings)."""

    data: Path
    detectors: dict[str, dict[str, Any]]  # resolved detector name -> its options
    format: str = "auto"
    limit: int | None = None
    field_map: dict[str, str] = field(default_factory=dict)  # the file's field -> ours
    encoding: str = "utf-8"
    label_base: int = 0  # 1: the file's first-error labels count steps from 1
    selection: RecordSelection = field(default_factory=RecordSelection)
    references: str = "auto"  # a file to join references from by question, "auto" or "none"
    variant: str = "exact_sum"
    chat_template: bool = True

    def detector_instances(self) -> list[Detector]:
        return [detectors.get(name)(**options) for name, options in self.detectors.items()]


@dataclass
class EvaluationPlan:
    """What will run, known before any model work: the traces, how they were read, each detector's capability."""

    traces: list[Trace]
    notes: list[str]
    detectors: list[Detector]
    capabilities: list[Capability]


def plan_evaluation(request: EvaluationRequest) -> EvaluationPlan:
    """Read the records and check every detector against them (trace fields only: well under a second)."""
    traces, notes = load_request_traces(request)
    instances = request.detector_instances()
    return EvaluationPlan(traces, notes, instances, check_all(instances, traces, request.selection.strict))


@dataclass
class EvaluationOutcome:
    split: str
    traces: list[Trace]
    evaluations: list[Evaluation]
    rows: list[dict[str, Any]]  # the detectors' rows, then the trivial baselines'
    notes: list[str] = field(default_factory=list)
    run_id: str | None = None
    capabilities: list[Capability] = field(default_factory=list)

    @property
    def best(self) -> Evaluation:
        return max(self.evaluations, key=lambda e: -1.0 if e.scores.f1 is None else e.scores.f1)

    @property
    def runnable_pct(self) -> float:
        """Percent of the records on which every requested detector could run."""
        return runnable_pct(self.capabilities, len(self.traces))

    def baseline(self, name: str) -> Scores:
        return next(b for b in baselines(self.traces) if b.name == name)


def runnable_pct(capabilities: list[Capability], total: int) -> float:
    """Percent of ``total`` records that every method in ``capabilities`` can run on."""
    if not total:
        return 0.0
    everywhere = set(range(total)).intersection(*(c.runnable for c in capabilities))
    return 100.0 * len(everywhere) / total


def seeded_sample(traces: list[Trace], n: int | None, seed: int, balanced: bool = False) -> list[Trace]:
    """``n`` records drawn with ``seed``, in file order (ProcessBench files list the erroneous samples first,
    so the first N alone would hold no correct ones). ``balanced``: n // 2 erroneous and n - n // 2 correct
    records (by the first-error label), or as many as the smaller class has."""
    rng = np.random.default_rng(seed)
    if balanced and n:
        wrong = [i for i, t in enumerate(traces) if t.first_error not in (None, -1)]
        right = [i for i, t in enumerate(traces) if t.first_error == -1]
        picked = [
            *rng.choice(wrong, min(n // 2, len(wrong)), replace=False),
            *rng.choice(right, min(n - n // 2, len(right)), replace=False),
        ]
        return [traces[i] for i in sorted(picked)]
    if not n or n >= len(traces):
        return traces
    chosen = rng.choice(len(traces), n, replace=False)
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
        label_base=request.label_base,
        display_name=request.data.name,
    )
    chosen = request.selection
    traces = seeded_sample(report.traces, chosen.sample, chosen.sample_seed, chosen.balanced)
    if not traces:
        raise RredcotError(f"{request.data.name}: no traces could be read ({report.records_failed} records skipped)")
    traces, matched = auto_references(request.data, traces, request.references)
    notes = [
        f"{len(traces)} traces from {request.data.name} ({report.format}); {report.records_failed} records skipped",
        *report.warnings,
    ]
    short = sample_shortfall(report.traces, chosen)
    return traces, notes + ([short] if short else []) + ([matched] if matched else [])


def sample_shortfall(traces: list[Trace], chosen: RecordSelection) -> str | None:
    """What a sample could not hold, in words (None when it holds what was asked): a balanced sample takes
    n // 2 erroneous and n - n // 2 correct records, and a file may have fewer of either."""
    if not chosen.sample:
        return None
    if not chosen.balanced:
        if chosen.sample <= len(traces):
            return None
        return f"asked for a sample of {chosen.sample} records; the file has {len(traces)}, so all are evaluated"
    wrong = sum(t.first_error not in (None, -1) for t in traces)
    right = sum(t.first_error == -1 for t in traces)
    want_wrong, want_right = chosen.sample // 2, chosen.sample - chosen.sample // 2
    if wrong >= want_wrong and right >= want_right:
        return None
    lacking = [f"{have} {kind} (of {want} asked)" for kind, have, want in
               (("erroneous", wrong, want_wrong), ("correct", right, want_right)) if have < want]  # fmt: skip
    empty = " F1 is undefined (n/a) without both kinds." if not (wrong and right) else ""
    return (
        f"the balanced sample of {chosen.sample} holds {min(wrong, want_wrong) + min(right, want_right)} records: "
        f"the file has only {' and '.join(lacking)} labelled records.{empty}"
    )


def evaluation_analyzer(
    lm: LanguageModel, request: EvaluationRequest, n_traces: int, sampler: Sampler | None = None
) -> Analyzer:
    """The analyzer an evaluation scores with (sampling detectors draw from ``sampler``, default ``lm``); every
    trace stays in its score cache, so detectors that read the same values (min_sigma, value_drop) share them."""
    prompt = PromptConfig(chat_template=request.chat_template)
    config = AnalysisConfig(prompt=prompt, scope="reasoning", boundaries="states", variant=request.variant)
    return Analyzer(lm, config, cache=BoundaryCache(max_contexts=n_traces + 8), sampler=sampler)


def calibrate_verifier(
    lm: LanguageModel, request: EvaluationRequest, calibration: EvaluationRequest
) -> tuple[EvaluationRequest, str]:
    """``request`` with the step verifier's threshold chosen on ``calibration``'s labelled records (another split
    or file, so the threshold is held out from the records it is scored on), and a note saying so. Calibration
    reads the given steps, whatever segmenter the evaluation uses."""
    steps = steps_segmenter()
    traces, _ = load_request_traces(
        replace(calibration, selection=replace(calibration.selection, segmenter=steps.name))
    )
    options = request.detectors.get(StepVerifier.name, {})
    analyzer = evaluation_analyzer(lm, calibration, len(traces))
    run = evaluate(StepVerifier(**options), analyzer, traces, steps)
    threshold, f1 = verifier_threshold(run, calibration.data.name)
    chosen = {**request.detectors, StepVerifier.name: {**options, "threshold": threshold}}
    note = (
        f"{StepVerifier.name} threshold {threshold:.3f} chosen on {calibration.data.name} "
        f"({sum(e is not None for e in run.evidence)} records; F1 there {100 * f1:.1f}, optimistic by construction)"
    )
    return replace(request, detectors=chosen), note


def verifier_threshold(run: Evaluation, source: str) -> tuple[float, float]:
    """The threshold with the best F1 on a ``step_verifier`` evaluation's recorded p(Yes) (given steps), kept
    inside the open interval the config accepts, and that F1."""
    pairs = [(np.array(e["p_yes"]), y) for e, y in zip(run.evidence, run.labels, strict=True) if e is not None]
    threshold, f1 = calibrate_threshold([p for p, _ in pairs], [y for _, y in pairs])
    if f1 < 0:
        raise RredcotError(
            f"{source}: calibrating a threshold needs erroneous and correct records; the {len(pairs)} read hold "
            "only one kind (use --calibrate-sample with a balanced file)"
        )
    return min(max(threshold, 1e-6), 1 - 1e-6), f1


def evaluation_split(request: EvaluationRequest, n_traces: int) -> str:
    """The name an evaluation's records go by: the file, and the sample when one was drawn."""
    chosen = request.selection
    kind = "balanced" if chosen.balanced else "random"
    return request.data.stem + (f" ({kind} {n_traces}, seed {chosen.sample_seed})" if chosen.sample else "")


def run_evaluation(
    lm: LanguageModel,
    request: EvaluationRequest,
    progress: Progress | None = None,
    plan: EvaluationPlan | None = None,
    on_result: Callable[[Evaluation], None] | None = None,
    sampler: Sampler | None = None,
) -> EvaluationOutcome:
    """Every requested detector on the records it can run on, with the trivial baselines' rows beside them;
    ``on_result`` receives each detector's evaluation as soon as it finishes; sampling detectors draw their
    rollouts from ``sampler`` (default: ``lm``)."""
    plan = plan or plan_evaluation(request)
    traces = plan.traces
    analyzer = evaluation_analyzer(lm, request, len(traces), sampler)
    segmenter = segmenters.get(request.selection.segmenter)()
    evaluations = []
    for detector in plan.detectors:
        name = detector.name
        report = None if progress is None else (lambda done, total, name=name: progress(name, done, total))
        evaluations.append(evaluate(detector, analyzer, traces, segmenter, report))
        if on_result is not None:
            on_result(evaluations[-1])
    notes = [*plan.notes, *(c.line() for c in plan.capabilities)]
    split = evaluation_split(request, len(traces))
    return EvaluationOutcome(
        split, traces, evaluations, table(evaluations, traces), notes, capabilities=plan.capabilities
    )


def table(evaluations: list[Evaluation], traces: list[Trace]) -> list[dict[str, Any]]:
    """The detectors' rows, then the trivial baselines'."""
    return [e.scores.row() for e in evaluations] + [b.row() for b in baselines(traces)]


class EvaluationRecord:
    """A ``diagnosis`` run in the store (the Diagnose page lists the finished ones), written as the evaluation
    goes: the run row when it is created, each detector's result when it finishes, the table at the end. Its
    ``run_id`` is known before any model work, so the user can be told where the results go."""

    def __init__(
        self,
        store: Store,
        lm: LanguageModel,
        request: EvaluationRequest,
        plan: EvaluationPlan,
        sampler: Sampler | None = None,
    ) -> None:
        self.store, self.lm, self.request, self.plan, self.sampler = store, lm, request, plan, sampler
        self.run_id = f"diagnosis-{uuid.uuid4().hex[:10]}"
        self.split = evaluation_split(request, len(plan.traces))
        self.evaluations: list[Evaluation] = []
        settings = {"split": self.split, "detectors": request.detectors}
        store.put_run(self.run_id, "diagnosis", lm.info(), settings, None)

    def run(
        self, progress: Progress | None = None, on_result: Callable[[Evaluation], None] | None = None
    ) -> EvaluationOutcome:
        """``run_evaluation``, each detector stored as it finishes; a run cut short is recorded as ``stopped``
        (Ctrl-C, SIGTERM, a cancelled job) or ``failed``, with the detectors that finished."""

        def finished(evaluation: Evaluation) -> None:
            self.add(evaluation)
            if on_result is not None:
                on_result(evaluation)

        status = "failed"
        try:
            outcome = run_evaluation(self.lm, self.request, progress, self.plan, finished, self.sampler)
            status = "done"
        except (KeyboardInterrupt, Cancelled):
            status = "stopped"
            raise
        finally:
            self.finish(status)
        outcome.run_id = self.run_id
        return outcome

    def add(self, evaluation: Evaluation) -> None:
        payload = {
            "detector": evaluation.detector,
            "scores": evaluation.scores.row(),
            "predictions": evaluation.predictions,
            "labels": evaluation.labels,
            "n_steps": evaluation.n_steps,
            "trace_hashes": evaluation.trace_hashes,
            "errors": evaluation.errors[:50],
            "notes": evaluation.notes,
        }
        settings = self.request.detectors[evaluation.method]
        cost = {"seconds": evaluation.scores.seconds}
        key = f"{self.run_id}:{evaluation.detector}"
        self.store.put_result(key, "", "diagnosis", evaluation.detector, settings, payload, cost)
        self.evaluations.append(evaluation)

    def finish(self, status: str = "done") -> None:
        """Close the run with the table of the detectors that finished."""
        seconds = sum(e.scores.seconds for e in self.evaluations)
        summary = {"split": self.split, "table": table(self.evaluations, self.plan.traces)}
        self.store.finish_run(self.run_id, status, summary, {"seconds": seconds})


def store_evaluation(store: Store, lm: LanguageModel, outcome: EvaluationOutcome, request: EvaluationRequest) -> str:
    """Record a finished evaluation as a ``diagnosis`` run; returns its run id (``EvaluationRecord.run`` records
    one as it runs)."""
    plan = EvaluationPlan(outcome.traces, outcome.notes, [], outcome.capabilities)
    record = EvaluationRecord(store, lm, request, plan)
    for evaluation in outcome.evaluations:
        record.add(evaluation)
    record.finish()
    outcome.run_id = record.run_id
    return record.run_id


def f1_key(scores: Scores) -> str:
    """F1 for a key=value line: four decimals, or ``nan`` where it is undefined."""
    return "nan" if scores.f1 is None else f"{scores.f1:.4f}"


def f1_text(scores: Scores) -> str:
    return f"F1 n/a ({scores.f1_reason})" if scores.f1 is None else f"F1 {100 * scores.f1:.1f}%"
