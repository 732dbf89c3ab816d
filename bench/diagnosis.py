"""First-error detection on ProcessBench GSM8K and MATH with no reference solution (issue 16), beside its controls.

For each split: a seeded balanced sample (``--per-class`` erroneous and as many correct records) of
``../shared/data/processbench/<split>.json``, read with ``references="none"`` (ProcessBench carries no reference
answer and no solution), so every detector runs in its reference-free mode (``auto``: ``own_answer`` values,
``loo`` with the own target, self-consistency MC, the neutral ``self_localize`` prompt, ``step_verifier``).
Prints the capability check, then per split the ProcessBench table (accuracies with Wilson 95% intervals) with
the trivial and ``outcome_then_*`` baselines, a ``step_verifier`` row whose threshold was chosen on the other
split (``calibrate_threshold``: held out, never fitted on the split it is scored on), and a paired bootstrap
(2000 resamples of the records) of the best
detector's F1 minus each baseline's. Last line: ``n records_runnable_pct best_detector best_f1
always_no_error_f1 uniform_random_f1 seconds_per_record`` (over both splits; the best detector is the split-best
with the higher F1) plus ``beats_trivial`` (yes when on some split the best detector's F1 exceeds every trivial
baseline's with the bootstrap 2.5th percentile of the difference above 0) and ``beats_outcome_controls`` (the
same against the ``outcome_then_*`` controls too, which read the outcome label). ``--sampler openai
--sampler-url URL`` sends the sampling detectors' rollouts to an OpenAI-compatible server (vLLM) instead.

    .venv/bin/python bench/diagnosis.py --detectors step_verifier --per-class 30   # 120 records, about 6 min

    .venv/bin/python bench/diagnosis.py               # about 20 min on 2 cores with the embedded SmolLM2
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from rredcot_viz.cli.analysis_commands import format_table
from rredcot_viz.cli.model_commands import add_sampler_arguments, sampler_from_args
from rredcot_viz.cli.options import add_settings_arguments, settings_from_args
from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.processbench import baseline_predictions, f1_score, score
from rredcot_viz.diagnosis.step_verifier import first_below
from rredcot_viz.model.catalogue import DEFAULT_MODEL
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.paths import shared_data_dir
from rredcot_viz.workflows.diagnose import (
    EvaluationOutcome,
    EvaluationRequest,
    RecordSelection,
    f1_key,
    plan_evaluation,
    run_evaluation,
    verifier_threshold,
)


def f1_of(predictions: list[int | None], labels: list[int]) -> float:
    """ProcessBench F1 (nan when a class is empty)."""
    errors = [p == y for p, y in zip(predictions, labels, strict=True) if y != -1]
    corrects = [p == -1 for p, y in zip(predictions, labels, strict=True) if y == -1]
    value = f1_score(np.mean(errors) if errors else None, np.mean(corrects) if corrects else None)
    return float("nan") if value is None else float(value)


def paired_bootstrap(
    best: list[int | None], other: list[int], labels: list[int], resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """F1(best) - F1(other) and its 95% percentile interval, resampling records within each class."""
    rng = np.random.default_rng(seed)
    wrong = np.flatnonzero(np.array(labels) != -1)
    right = np.flatnonzero(np.array(labels) == -1)
    deltas = []
    for _ in range(resamples):
        pick = np.concatenate([rng.choice(wrong, len(wrong)), rng.choice(right, len(right))])
        ys = [labels[i] for i in pick]
        deltas.append(f1_of([best[i] for i in pick], ys) - f1_of([other[i] for i in pick], ys))
    low, high = np.nanpercentile(deltas, [2.5, 97.5])
    return f1_of(best, labels) - f1_of(other, labels), float(low), float(high)


def calibrated_verifier(source: EvaluationOutcome, target: EvaluationOutcome) -> None:
    """Add to ``target`` a ``step_verifier`` row whose threshold was chosen on ``source`` (another split), from
    the p(Yes) both runs recorded, so the calibration is held out (segments are the given steps)."""
    runs = [next((e for e in o.evaluations if e.method == "step_verifier"), None) for o in (source, target)]
    if None in runs or any(p is None for run in runs for p in run.evidence):
        return
    calibration, held_out = runs
    threshold, fitted_f1 = verifier_threshold(calibration, source.split)
    name = f"step_verifier[threshold {threshold:.3f} from {source.split.split(' ')[0]}]"
    predictions = [first_below(np.array(e["p_yes"]), threshold) for e in held_out.evidence]
    scores = score(name, predictions, held_out.labels)
    print(f"  {name}: F1 {100 * fitted_f1:.1f} on the split it was chosen on", file=sys.stderr)
    evaluation = replace(held_out, detector=name, scores=scores, predictions=predictions, method=name)
    target.rows.insert(len(target.evaluations), scores.row())
    target.evaluations.append(evaluation)


def report(outcome: EvaluationOutcome) -> tuple[bool, bool]:
    """Print the split's table and the best detector's bootstrap against each baseline. Returns whether it beats
    every trivial baseline, and every outcome-reading control, with the interval of the difference above 0."""
    print(f"\nProcessBench {outcome.split}, n={len(outcome.traces)}")
    print(format_table(outcome.rows, "{:.1f}"))
    for evaluation in outcome.evaluations:
        if evaluation.errors:
            print(f"  {evaluation.detector}: {len(evaluation.errors)} without a verdict, e.g. {evaluation.errors[0]}")
    best = outcome.best
    beats = {"trivial": True, "outcome": True}
    print(f"best detector {best.detector}: F1 minus each baseline's (paired bootstrap 95% interval)")
    for name, guess in baseline_predictions(outcome.traces).items():
        delta, low, high = paired_bootstrap(best.predictions, guess, best.labels)
        kind = "outcome" if name.startswith("outcome_then") else "trivial"
        beats[kind] &= low > 0
        print(f"  - {name:<22} {100 * delta:+6.1f} [{100 * low:+.1f}, {100 * high:+.1f}]")
    return beats["trivial"], beats["outcome"]


def progress(name: str, done: int, total: int) -> None:
    if done == total:
        print(f"  {name}: {total} records done", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", default="gsm8k,math")
    parser.add_argument("--per-class", type=int, default=10, help="erroneous (and correct) records per split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, help="the folder of <split>.json (default: shared/data's processbench)")
    parser.add_argument("--detectors", default=",".join(detectors.names()))
    for name in detectors.names():  # the CLI's generated options: --<detector>-<setting> VALUE
        add_settings_arguments(parser, {name: detectors.get(name).Config}, prefix=name, title=f"{name} settings")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="catalogue key, model folder or GGUF file")
    add_sampler_arguments(parser)  # where the sampling detectors (mc[self_consistency]) draw their rollouts
    args = parser.parse_args(argv)
    options: dict[str, dict] = {detectors.resolve(n): {} for n in args.detectors.split(",") if n}
    for name in options:
        options[name].update(settings_from_args(args, detectors.get(name).Config, prefix=name))

    requests = [
        EvaluationRequest(
            (args.data or shared_data_dir() / "processbench") / f"{split}.json",
            options,
            references="none",
            selection=RecordSelection(sample=2 * args.per_class, sample_seed=args.seed, balanced=True),
        )
        for split in args.splits.split(",")
    ]
    started = time.perf_counter()
    plans = [plan_evaluation(request) for request in requests]
    print(f"capability check ({time.perf_counter() - started:.2f} s, before any model work):")
    for request, plan in zip(requests, plans, strict=True):
        print(f"  {request.data.name}: " + " | ".join([*plan.notes, *(c.line() for c in plan.capabilities)]))

    lm = LanguageModel.load(ModelConfig(source=args.model))
    sampler = sampler_from_args(args, lm)
    started = time.perf_counter()
    outcomes = [
        run_evaluation(lm, request, progress, plan=plan, sampler=sampler)
        for request, plan in zip(requests, plans, strict=True)
    ]
    seconds = time.perf_counter() - started
    if len(outcomes) == 2:
        first, second = outcomes
        calibrated_verifier(first, second)
        calibrated_verifier(second, first)
    verdicts = [report(outcome) for outcome in outcomes]
    beats_trivial = any(trivial for trivial, _ in verdicts)
    beats_outcome = any(trivial and outcome for trivial, outcome in verdicts)
    n = sum(len(o.traces) for o in outcomes)
    runnable = sum(o.runnable_pct * len(o.traces) for o in outcomes) / n
    top = max(outcomes, key=lambda o: -1.0 if o.best.scores.f1 is None else o.best.scores.f1)

    print(f"\nmodel {lm.name}; {seconds:.0f} s for {n} records")
    print(
        f"n={n} records_runnable_pct={runnable:.0f} best_detector={top.best.detector}@{top.split.split(' ')[0]} "
        f"best_f1={f1_key(top.best.scores)} always_no_error_f1={f1_key(top.baseline('always_no_error'))} "
        f"uniform_random_f1={f1_key(top.baseline('uniform_random'))} seconds_per_record={seconds / n:.1f} "
        f"beats_trivial={'yes' if beats_trivial else 'no'} beats_outcome_controls={'yes' if beats_outcome else 'no'}"
    )


if __name__ == "__main__":
    main()
