"""Diagnosis subcommands: ``eval-diagnosis`` (ProcessBench F1 of detectors), ``resample`` and
``resample-batch`` (reset resampling, RRPO vs SRPO)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from rredcot_viz.cli.analysis_commands import (
    add_segmenter_arguments,
    add_trace_arguments,
    build_segmenter,
    format_table,
    select_traces,
)
from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.cli.model_commands import (
    add_model_arguments,
    analyzer_from_args,
    load_from_args,
    sampler_from_args,
)
from rredcot_viz.cli.options import (
    add_input_arguments,
    add_settings_arguments,
    at_least_one,
    input_options,
    method_settings,
    settings_from_args,
)
from rredcot_viz.files import atomic_write, check_output_path


def _configure_eval(parser: argparse.ArgumentParser) -> None:
    from rredcot_viz.diagnosis import detectors
    from rredcot_viz.engine import AnalysisConfig
    from rredcot_viz.workflows.diagnose import RecordSelection

    parser.add_argument("--data", required=True, help="ProcessBench-format file (steps + label)")
    parser.add_argument("--detector", default="all", help=f"comma list of {', '.join(detectors.names())}, or all")
    parser.add_argument("--limit", type=at_least_one, help="read only the first N records of the file")
    add_settings_arguments(parser, [RecordSelection], title="records")
    parser.add_argument(
        "--references",
        default="auto",
        help="file to take reference answers/solutions from by question (auto: GSM8K test for the "
        "GSM8K split), or none",
    )
    add_input_arguments(parser)
    add_settings_arguments(parser, [AnalysisConfig], exclude=("scope", "boundaries"), title="analysis settings")
    parser.add_argument("--no-store", action="store_true", help="do not record the run in the DuckDB store")
    parser.add_argument(
        "--calibrate-on",
        metavar="FILE",
        help="choose the step_verifier threshold on this labelled file (another split: held out) before evaluating",
    )
    parser.add_argument(
        "--calibrate-sample", type=int, default=40, help="balanced records of --calibrate-on to calibrate on"
    )
    for name in detectors.names():  # per detector: the same name (threshold) means different things in each
        add_settings_arguments(parser, {name: detectors.get(name).Config}, prefix=name, title=f"{name} settings")
    add_model_arguments(parser, sampling=True)


def _run_eval(args: argparse.Namespace) -> int:
    from rredcot_viz.diagnosis import detectors
    from rredcot_viz.diagnosis.step_verifier import StepVerifier
    from rredcot_viz.engine import AnalysisConfig
    from rredcot_viz.errors import ConfigError
    from rredcot_viz.store import Store
    from rredcot_viz.workflows.diagnose import (
        EvaluationRecord,
        EvaluationRequest,
        RecordSelection,
        calibrate_verifier,
        f1_text,
        plan_evaluation,
        run_evaluation,
    )

    names = detectors.names() if args.detector == "all" else [n.strip() for n in args.detector.split(",")]
    options = {detectors.resolve(n): {} for n in names}
    for name in detectors.names():
        given = settings_from_args(args, detectors.get(name).Config, prefix=name)
        if given and name not in options:
            raise ConfigError(f"--{name.replace('_', '-')}-* options set detector {name!r}, which is not evaluated")
        if given:
            options[name].update(given)
    parts = {"records": RecordSelection, "analysis": AnalysisConfig}  # both sets of options are unprefixed
    given = method_settings(args, parts, prefix="", known=parts)
    request = EvaluationRequest(
        Path(args.data),
        options,
        format=args.format,
        limit=args.limit,
        **input_options(args),
        selection=RecordSelection(**given["records"]),
        references=args.references,
        **given["analysis"],
    )
    started = time.perf_counter()
    plan = plan_evaluation(request)  # reads trace fields only: what can run is known before the model loads
    print(f"capability check ({time.perf_counter() - started:.2f} s, before any model work):")
    for line in (*plan.notes, *(c.line() for c in plan.capabilities)):
        print(f"  {line}")
    verifier = StepVerifier.name
    if args.calibrate_on and verifier not in options:
        raise ConfigError(f"--calibrate-on calibrates the {verifier} threshold; add {verifier} to --detector")
    store = None if args.no_store else Store()  # here, not after the work: a store that cannot be opened stops now
    lm = load_from_args(args)
    if args.calibrate_on:
        balanced = replace(request.selection, sample=args.calibrate_sample, balanced=True)
        calibration = replace(request, data=Path(args.calibrate_on), limit=None, selection=balanced)
        request, note = calibrate_verifier(lm, request, calibration)
        plan = plan_evaluation(request)
        plan.notes.append(note)
        print(note)
    sampler = sampler_from_args(args, lm)
    bars = ProgressBars()

    def finished(evaluation) -> None:
        failed = f" ({len(evaluation.errors)} failed, e.g. {evaluation.errors[0]})" if evaluation.errors else ""
        stored = " (stored)" if store is not None else ""
        bars.write(f"  {evaluation.detector}: {f1_text(evaluation.scores)} in {evaluation.scores.seconds:.0f} s"
                   f"{failed}{stored}")  # fmt: skip
        for note in evaluation.notes:
            bars.write(f"    {note}")
        bars.close()

    if store is None:
        outcome = run_evaluation(lm, request, bars.update, plan=plan, on_result=finished, sampler=sampler)
    else:
        record = EvaluationRecord(store, lm, request, plan, sampler)
        print(f"run {record.run_id}: each detector's result is stored in {store.path} as it finishes", flush=True)
        outcome = record.run(bars.update, on_result=finished)
    bars.close()
    print(f"\nProcessBench {outcome.split}, n={len(outcome.traces)}, model {lm.name}")
    print(format_table(outcome.rows, "{:.1f}"))
    if store is not None:
        print(f"stored as run {outcome.run_id} in {store.path}")
    print(headline(outcome))
    return 0


def headline(outcome) -> str:
    """The key=value line that ends the command (``nan`` where an F1 is undefined)."""
    from rredcot_viz.workflows.diagnose import f1_key

    best = outcome.best
    n = len(outcome.traces)
    seconds = sum(e.scores.seconds for e in outcome.evaluations) / max(n, 1)
    return (
        f"split={outcome.split.split(' ')[0]} n={n} records_runnable_pct={outcome.runnable_pct:.0f} "
        f"best_detector={best.detector} best_f1={f1_key(best.scores)} "
        f"always_no_error_f1={f1_key(outcome.baseline('always_no_error'))} "
        f"uniform_random_f1={f1_key(outcome.baseline('uniform_random'))} seconds_per_record={seconds:.2f}"
    )


def _configure_resample(parser: argparse.ArgumentParser) -> None:
    from rredcot_viz.diagnosis import detectors
    from rredcot_viz.diagnosis.resample import ResetConfig

    add_trace_arguments(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--segment", type=int, help="reset before this 1-based segment")
    where.add_argument(
        "--detector",
        choices=detectors.names(),
        help="reset where this detector puts the first error (SRPO: self_localize)",
    )
    where.add_argument("--random", action="store_true", help="reset at a uniformly random segment (RRPO)")
    add_segmenter_arguments(parser)
    add_settings_arguments(parser, [ResetConfig], aliases={"suffixes": ("-G",)}, title="resampling settings")
    add_settings_arguments(
        parser,
        {name: detectors.get(name).Config for name in detectors.names()},
        prefix="det",
        title="detector settings (those of the chosen --detector)",
    )
    add_model_arguments(parser, sampling=True)


def _setup(args: argparse.Namespace):
    from rredcot_viz.diagnosis.resample import ResetConfig
    from rredcot_viz.engine import AnalysisConfig

    config = ResetConfig(**settings_from_args(args, ResetConfig))
    return analyzer_from_args(args, AnalysisConfig(boundaries="states")), build_segmenter(args), config


def _detector(args: argparse.Namespace, name: str, **preset):
    """The detector ``name`` with ``preset`` settings under the ``--det-*`` options given."""
    from rredcot_viz.diagnosis import detectors

    detector_type = detectors.get(name)
    given = settings_from_args(args, detector_type.Config, prefix="det", what=f"detector {name!r}")
    return detector_type(**{**preset, **given})


def _print_reset(result) -> None:
    low, high = result.interval
    print(
        f"reset before segment {result.segment}/{result.k} ({result.source}, position {result.position:.2f}): "
        f"{result.successes}/{len(result.suffixes)} suffixes correct, Wilson 95% [{low:.2f}, {high:.2f}]"
    )
    for r in result.suffixes:
        tail = " ".join(r.text.split())[-110:]
        mark = "correct" if r.correct else "wrong  "
        print(f"  [{mark}] seed {r.seed} answer {r.answer!r} ({r.finish_reason}): …{tail}")


def _run_resample(args: argparse.Namespace) -> int:
    import numpy as np

    from rredcot_viz.diagnosis.resample import detector_reset_step, random_reset_step, reset_resample

    detector = _detector(args, args.detector) if args.detector else None  # a bad setting stops before the model
    analyzer, segmenter, config = _setup(args)
    rng = np.random.default_rng(config.seed)
    for trace in select_traces(args):
        analyzer.context(trace).score_stats()
        k = analyzer.segment(trace, segmenter).k
        if detector is not None:
            step, source = detector_reset_step(analyzer, trace, segmenter, detector), f"detector:{detector.name}"
        elif args.random:
            step, source = random_reset_step(k, rng), "random"
        else:
            step, source = args.segment or 1, "user"
        print(f"\n== {trace.trace_id or trace.short_id} (R={trace.outcome}): {trace.question[:70]!r}")
        _print_reset(reset_resample(analyzer, trace, segmenter, step, config, source))
    return 0


def _configure_batch(parser: argparse.ArgumentParser) -> None:
    _configure_resample(parser)
    parser.add_argument("--out", help="write the per-trace results as JSONL")


def _run_batch(args: argparse.Namespace) -> int:
    from rredcot_viz.diagnosis.base import SRPO_LOCALISER
    from rredcot_viz.diagnosis.resample import compare_resets

    if args.out:
        check_output_path(args.out)
    detector = _detector(args, args.detector or SRPO_LOCALISER, variant="l2")  # SRPO's localisation prompt
    analyzer, segmenter, config = _setup(args)
    started = time.perf_counter()
    bars = ProgressBars()
    comparison = compare_resets(
        analyzer, select_traces(args), segmenter, detector, config, config.seed, bars.callback("failed traces")
    )
    bars.close()
    rows = []
    for name, summary in comparison.summary().items():
        low, high = summary["corrected_interval"]
        mlow, mhigh = summary["mean_success_interval"]
        positions = summary["positions"]
        rows.append(
            {
                "reset": name,
                "traces": summary["traces"],
                "corrected (any of G)": f"{summary['corrected_any_of_G']:.2f} [{low:.2f}, {high:.2f}]",
                "mean success": f"{summary['mean_success']:.2f} [{mlow:.2f}, {mhigh:.2f}]",
                "reset position mean": f"{sum(positions) / len(positions):.2f}",
                "positions": " ".join(f"{p:.2f}" for p in positions),
            }
        )
    print(format_table(rows))
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.out:
        with atomic_write(args.out) as sink:
            for name, results in comparison.results.items():
                for r in results:
                    sink.write(
                        json.dumps(
                            {
                                "reset": name,
                                "segment": r.segment,
                                "k": r.k,
                                "position": r.position,
                                "successes": r.successes,
                                "suffixes": [s.text for s in r.suffixes],
                            }
                        )
                        + "\n"
                    )
    return 0


commands.register("eval-diagnosis")(
    Command("ProcessBench F1 of first-error detectors (with the trivial baselines)", _configure_eval, _run_eval)
)
commands.register("resample")(
    Command(
        "reset a trace before a segment and sample G suffixes (user, detector or random reset)",
        _configure_resample,
        _run_resample,
    )
)
commands.register("resample-batch")(
    Command(
        "RRPO (random) vs SRPO (self-localised) resets on the failed traces of a file", _configure_batch, _run_batch
    )
)
