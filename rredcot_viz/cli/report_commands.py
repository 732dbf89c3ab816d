"""``report``: one self-contained HTML file of a trace's analysis or an RL run, to send to a colleague."""

from __future__ import annotations

import argparse
from pathlib import Path

from rredcot_viz.cli.analysis_commands import add_method_arguments, analysis_config, build_methods
from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.cli.model_commands import add_model_arguments, load_from_args
from rredcot_viz.cli.options import add_folder_arguments, add_input_arguments, folder_options, input_options

SHADES = ("sigma", "Q_hat", "R_hat", "v_hat")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="TRACE_OR_RUN",
        help="a run id with stored rollouts (imported or trained), a trace id or hash (6+ characters) in the store "
        "or the samples, or a dataset file (with --trace)",
    )
    parser.add_argument("--out", required=True, help="the HTML file to write (replaced atomically)")
    parser.add_argument("--trace", help="with a dataset file: the trace id or 0-based index (default the first)")
    parser.add_argument("--shade", choices=SHADES, default="sigma", help="what shades the heatmap (default sigma)")
    parser.add_argument("--step", type=int, help="for a run: show the groups of this step")
    parser.add_argument("--prompt", type=int, help="for a run: show every group of this prompt, side by side")
    parser.add_argument("--analysis", help="for an imported run: the dataset analysis whose sigma is the credit "
                        "(default the newest that covers the run)")  # fmt: skip
    add_input_arguments(parser)
    add_folder_arguments(parser)
    add_method_arguments(parser)
    add_model_arguments(parser)


def _run(args: argparse.Namespace) -> int:
    from rredcot_viz.store import Store
    from rredcot_viz.traces.io import sample_traces
    from rredcot_viz.workflows.report import ReportTarget, find_target, write_report

    store = Store()
    if Path(args.target).exists():
        target = ReportTarget(trace=_trace_from_file(args))
    else:
        target = find_target(store, args.target, sample_traces())
    html = _run_html(store, target.run_id, args) if target.run_id else _trace_html(store, target.trace, args)
    out = write_report(html, args.out)
    print(f"wrote {out} ({len(html) / 1e6:.1f} MB, self-contained: open it in any browser, offline)")
    return 0


def _trace_from_file(args: argparse.Namespace):
    from rredcot_viz.errors import ImportFormatError
    from rredcot_viz.traces.importers import import_file

    traces = import_file(args.target, args.format, **input_options(args), **folder_options(args)).traces
    if not traces:
        raise ImportFormatError(f"no trace could be read from {args.target}")
    if args.trace is None:
        return traces[0]
    matches = [t for t in traces if args.trace in (t.trace_id, t.short_id)]
    if not matches and args.trace.isascii() and args.trace.isdigit() and int(args.trace) < len(traces):
        matches = [traces[int(args.trace)]]
    if not matches:
        raise ImportFormatError(f"no trace {args.trace!r} in {args.target}: give a trace id or an index below "
                                f"{len(traces)}")  # fmt: skip
    return matches[0]


def _trace_html(store, trace, args: argparse.Namespace) -> str:
    from rredcot_viz.engine import Analyzer
    from rredcot_viz.figures.report import analysis_report
    from rredcot_viz.scoring import BoundaryCache
    from rredcot_viz.workflows.report import analysis_settings

    segmenter, estimator = build_methods(args)
    config = analysis_config(args)
    analyzer = Analyzer(load_from_args(args), config, cache=BoundaryCache(max_contexts=16, backend=store))
    bars = ProgressBars()
    result = analyzer.analyze(trace, segmenter, estimator, progress=bars.callback(f"scoring {trace.short_id}"))
    bars.close()
    if args.shade != "sigma" and args.shade not in {"Q_hat", *result.values.components}:
        args.shade = "sigma"
    return analysis_report(result, analyzer.lm.info(), analysis_settings(segmenter, estimator, config), args.shade)


def _run_html(store, run_id: str, args: argparse.Namespace) -> str:
    from rredcot_viz.errors import ConfigError
    from rredcot_viz.figures.report import run_report
    from rredcot_viz.workflows.runs import credit_analyses, load_run, prompt_groups, step_table

    analysis = args.analysis
    if analysis is None:
        covering = credit_analyses(store, run_id)
        analysis = str(covering["run_id"].iloc[0]) if len(covering) else None
    groups = load_run(store, run_id, analysis)
    shown = groups
    if args.step is not None:
        shown = [g for g in shown if g.step == args.step]
    if args.prompt is not None:
        shown = prompt_groups(shown, args.prompt)
    if (args.step is not None or args.prompt is not None) and not shown:
        raise ConfigError(f"run {run_id} has no group at step {args.step}, prompt {args.prompt}")
    filtered = args.step is not None or args.prompt is not None
    settings = {"credit from": analysis or "none (no analysis of this run's traces)", "step": args.step,
                "prompt": args.prompt}  # fmt: skip
    return run_report(run_id, groups, step_table(groups), settings, shown if filtered else ())


commands.register("report")(
    Command("write one self-contained HTML report of a trace's analysis or an RL run", _configure, _run)
)
