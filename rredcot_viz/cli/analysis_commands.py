"""``analyze``: per-segment R-hat, v-hat, Q-hat and sigma for the traces of any importable file."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.cli.model_commands import add_model_arguments, analyzer_from_args
from rredcot_viz.cli.options import (
    add_folder_arguments,
    add_input_arguments,
    add_settings_arguments,
    at_least_one,
    folder_options,
    input_options,
    method_settings,
    settings_from_args,
)
from rredcot_viz.files import check_output_path
from rredcot_viz.segmenters.base import DEFAULT_SEGMENTER


def cli_analysis():
    """The CLI's analysis defaults: only the chosen segmenter's candidate cuts are scored up front (a short trace
    takes 1-2 s; docs/guide.md). A function, so that importing this module does not load the engine (and torch)."""
    from rredcot_viz.engine import AnalysisConfig

    return AnalysisConfig(boundaries="segmenter")


def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="traces in any supported format, a file or a dataset folder (see `import`)")
    add_input_arguments(parser)
    add_folder_arguments(parser)
    parser.add_argument(
        "--trace", action="append", help="trace id, short hash or 0-based index to analyse (repeatable)"
    )
    parser.add_argument("--limit", type=at_least_one, default=None, help="analyse at most this many traces")


def select_traces(args: argparse.Namespace) -> list:
    """The traces of ``args.file`` that ``--trace`` and ``--limit`` choose (the file is read only as far as
    ``--limit`` needs when no ``--trace`` is given)."""
    from rredcot_viz.traces.importers import import_file

    report = import_file(
        args.file, args.format, None if args.trace else args.limit, **input_options(args), **folder_options(args)
    )
    for issue in report.issues[:5]:
        print(f"skipped: {issue}")
    for warning in report.warnings:
        print(f"warning: {warning}")
    traces = report.traces
    if args.trace:
        traces = [picked for wanted in args.trace for picked in pick_trace(traces, wanted, args.file)]
    return traces[: args.limit] if args.limit is not None else traces


def pick_trace(traces: list, wanted: str, file: str) -> list:
    """The trace ``wanted`` names: by id or short hash, else by 0-based index. An id that names several
    different traces is refused with the candidates, since analysing one of them silently could be the wrong one."""
    from rredcot_viz.errors import ImportFormatError

    matches = [(i, t) for i, t in enumerate(traces) if wanted in (t.trace_id, t.short_id)]
    if not matches and wanted.isascii() and wanted.isdigit() and int(wanted) < len(traces):
        matches = [(int(wanted), traces[int(wanted)])]
    if not matches:
        raise ImportFormatError(f"no trace {wanted!r} in {file}: give a trace id or an index below {len(traces)}")
    distinct = {t.content_hash: (i, t) for i, t in matches}
    if len(distinct) > 1:
        shown = ", ".join(f"index {i} (short hash {t.short_id})" for i, t in list(distinct.values())[:8])
        raise ImportFormatError(
            f"trace id {wanted!r} names {len(distinct)} different traces in {file}: {shown}; give the index or "
            "short hash of the one you mean"
        )
    return [matches[0][1]]


SEGMENTER_ALIASES = {"k": ("--k",), "merge_score": ("--merge-score",)}
SEGMENTER_FORMER = {"k": ("--seg-k",)}  # K is --k in every command
ESTIMATOR_ALIASES = {"aggregation": ("--aggregation",), "trigger": ("--trigger",)}
MC_ALIASES = {
    "rollouts": ("--mc-rollouts",),
    "max_new_tokens": ("--mc-max-tokens",),
    "temperature": ("--mc-temperature",),
}


def add_segmenter_arguments(parser: argparse.ArgumentParser, default: str | None = DEFAULT_SEGMENTER) -> None:
    """``--segmenter`` and every segmenter's settings as ``--seg-*`` (``--k``, ``--merge-score`` for short)."""
    from rredcot_viz.segmenters import segmenters

    parser.add_argument(
        "--segmenter", default=default, choices=segmenters.names(), help=f"how the reasoning is cut (default {default})"
    )
    add_settings_arguments(
        parser,
        {name: segmenters.get(name).Config for name in segmenters.names()},
        prefix="seg",
        aliases=SEGMENTER_ALIASES,
        former=SEGMENTER_FORMER,
        title="segmenter settings (those of the chosen --segmenter)",
    )


def add_estimator_arguments(parser: argparse.ArgumentParser) -> None:
    """``--estimator`` and every estimator's settings as ``--est-*`` (``--aggregation``, ``--trigger`` for short)."""
    from rredcot_viz.estimators import estimators
    from rredcot_viz.estimators.base import DEFAULT_ESTIMATOR

    parser.add_argument(
        "--estimator",
        default=DEFAULT_ESTIMATOR,
        choices=estimators.names(),
        help=f"how states are valued (default {DEFAULT_ESTIMATOR})",
    )
    add_settings_arguments(
        parser,
        {name: estimators.get(name).Config for name in estimators.names()},
        prefix="est",
        aliases=ESTIMATOR_ALIASES,
        title="estimator settings (those of the chosen --estimator)",
    )


def add_analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """The analysis settings (scope, boundaries, redistribution variant) and the prompt."""
    from rredcot_viz.engine import AnalysisConfig
    from rredcot_viz.scoring import PromptConfig

    add_settings_arguments(parser, [AnalysisConfig], initial=cli_analysis(), title="analysis settings")
    add_settings_arguments(parser, [PromptConfig], title="prompt settings")  # --system-prompt, --no-chat-template


def add_method_arguments(parser: argparse.ArgumentParser) -> None:
    add_segmenter_arguments(parser)
    add_estimator_arguments(parser)
    add_analysis_arguments(parser)


def build_segmenter(args: argparse.Namespace):
    from rredcot_viz.segmenters import segmenters

    segmenter_type = segmenters.get(args.segmenter)
    what = f"segmenter {args.segmenter!r}"
    return segmenter_type(**settings_from_args(args, segmenter_type.Config, prefix="seg", what=what))


def build_methods(args: argparse.Namespace):
    from rredcot_viz.estimators import estimators

    estimator_type = estimators.get(args.estimator)
    settings = settings_from_args(args, estimator_type.Config, prefix="est", what=f"estimator {args.estimator!r}")
    return build_segmenter(args), estimator_type(**settings)


def analysis_config(args: argparse.Namespace):
    from rredcot_viz.engine import AnalysisConfig
    from rredcot_viz.scoring import PromptConfig

    prompt = PromptConfig(**settings_from_args(args, PromptConfig))
    return replace(cli_analysis(), prompt=prompt, **settings_from_args(args, AnalysisConfig))


def format_table(rows: list[dict[str, Any]], float_format: str = "{:+.4f}") -> str:
    """Aligned columns; floats signed with four decimals by default (per-segment values)."""
    if not rows:
        return "(no segments)"
    columns = list(rows[0])
    cells = [[_cell(row[c], float_format) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _cell(value: Any, float_format: str = "{:+.4f}") -> str:
    return float_format.format(value) if isinstance(value, float) else str(value)


def _configure_analyze(parser: argparse.ArgumentParser) -> None:
    add_trace_arguments(parser)
    add_method_arguments(parser)
    parser.add_argument("--out", help="write results: .jsonl (one record per trace) or .csv (one row per segment)")
    parser.add_argument("--preview", type=int, default=48, help="characters of segment text in the table")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop before loading the model when a trace lacks what the estimator needs",
    )
    add_model_arguments(parser, sampling=True)


def _run_analyze(args: argparse.Namespace) -> int:
    from rredcot_viz.workflows.analyze import analyze_traces, check_traces, write_results

    if args.out:
        check_output_path(args.out)
    segmenter, estimator = build_methods(args)
    check = check_traces(select_traces(args), estimator, args.strict)
    for line in check.lines():
        print(line)
    traces = check.require()
    analyzer = analyzer_from_args(args, analysis_config(args))
    results = []
    bars = ProgressBars()
    scoring = lambda trace: bars.callback(f"scoring {trace.short_id}")  # noqa: E731
    for result in analyze_traces(analyzer, traces, segmenter, estimator, scoring):
        bars.close()
        results.append(result)
        trace = result.trace
        print(f"\n== {trace.trace_id or trace.short_id}: {trace.question[:70]!r}")
        print(
            f"   {segmenter.name} K={result.k}, {estimator.name}, {result.variant}; answer {trace.answer!r} vs "
            f"reference {trace.reference_answer!r} -> R={result.outcome:g}; sum(sigma)={result.sigma.sum():+.4f}; "
            f"{result.cost.tokens_processed} tokens, {result.cost.seconds:.1f} s"
        )
        for warning in result.warnings + result.values.notes:
            print(f"   note: {warning}")
        print(format_table(result.rows(args.preview)))
    if args.out:
        write_results(results, Path(args.out))
        print(f"\nwrote {len(results)} results to {args.out}")
    return 0


commands.register("analyze")(
    Command("per-segment R-hat, v-hat, Q-hat and sigma for traces in any format", _configure_analyze, _run_analyze)
)


def _configure_compare(parser: argparse.ArgumentParser) -> None:
    from rredcot_viz.attribution import attributions
    from rredcot_viz.attribution.agreement import metrics
    from rredcot_viz.estimators import estimators
    from rredcot_viz.estimators.montecarlo import PRESETS

    add_trace_arguments(parser)
    add_segmenter_arguments(parser)
    add_analysis_arguments(parser)
    parser.add_argument(
        "--methods",
        default="rredcot,mc,loo,shapley,grad_x_input",
        help=f"comma-separated estimators and attributions, of {', '.join([*estimators, *attributions])}",
    )
    parser.add_argument("--mc-preset", default="cpu_quick", choices=list(PRESETS), help="Monte Carlo's starting "
                        "settings, which --mc-* / --est-* options override (default cpu_quick)")  # fmt: skip
    add_settings_arguments(
        parser,
        {name: estimators.get(name).Config for name in estimators.names()},
        prefix="est",
        initial=PRESETS["cpu_quick"],
        aliases=MC_ALIASES,
        title="estimator settings (every chosen estimator that has the setting gets it)",
    )
    add_settings_arguments(
        parser,
        {name: attributions.get(name).Config for name in attributions.names()},
        prefix="attr",
        title="attribution settings (every chosen attribution that has the setting gets it)",
    )
    parser.add_argument("--metric", default="spearman", choices=metrics.names(), help="agreement (default spearman)")
    parser.add_argument("--preview", type=int, default=40, help="characters of segment text in the table")
    add_model_arguments(parser, sampling=True)


def method_options(args: argparse.Namespace, methods: list[str]) -> dict[str, dict[str, Any]]:
    """Each method's settings: every chosen estimator configured by a ``MonteCarloConfig`` starts from
    ``--mc-preset``; ``--est-*`` / ``--attr-*`` options go to every chosen method that has them."""
    from dataclasses import asdict

    from rredcot_viz.attribution import attributions
    from rredcot_viz.estimators import estimators
    from rredcot_viz.estimators.montecarlo import PRESETS, MonteCarloConfig

    options: dict[str, dict[str, Any]] = {name: {} for name in methods}
    for name in (n for n in methods if n in estimators):
        if issubclass(estimators.get(name).Config, MonteCarloConfig):
            options[name] = asdict(PRESETS[args.mc_preset])
    for registry, prefix in ((estimators, "est"), (attributions, "attr")):
        known = {name: registry.get(name).Config for name in registry.names()}
        chosen = {name: known[registry.resolve(name)] for name in methods if name in registry}
        for name, given in method_settings(args, chosen, prefix=prefix, known=known).items():
            options[name].update(given)
    return options


def _run_compare(args: argparse.Namespace) -> int:
    from rredcot_viz.workflows.compare import compare, method_kind

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for name in methods:
        method_kind(name)  # unknown names fail before the model loads
    traces = select_traces(args)
    segmenter = build_segmenter(args)
    options = method_options(args, methods)
    analyzer = analyzer_from_args(args, analysis_config(args))
    bars = ProgressBars()
    for trace in traces:
        comparison = compare(analyzer, trace, segmenter, methods, options, {n: bars.callback(n) for n in methods})
        bars.close()
        seg = comparison.segmentation
        print(f"\n== {trace.trace_id or trace.short_id}: {seg.strategy} K={seg.k}, R={trace.outcome}")
        print(format_table(comparison.rows(args.preview)))
        names, matrix = comparison.matrix(args.metric)
        print(f"\n{args.metric} between methods (NaN: a constant score vector)")
        print(
            format_table(
                [{"": a, **{b: float(matrix[i, j]) for j, b in enumerate(names)}} for i, a in enumerate(names)]
            )
        )
        print("\ncost")
        for name, result in comparison.methods.items():
            extra = "; ".join([*(f"{k}={v:.3g}" for k, v in result.checks.items()), *result.notes])
            print(
                f"  {name:22s} {result.cost.seconds:7.1f} s  {result.cost.tokens_processed:8d} tokens in  "
                f"{result.cost.tokens_generated:7d} generated  {extra}"
            )
    return 0


commands.register("compare")(
    Command(
        "RREDCoT vs Monte Carlo vs attributions on the same segments, with agreement and cost",
        _configure_compare,
        _run_compare,
    )
)
