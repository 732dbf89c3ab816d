"""Data subcommands: ``import``."""

from __future__ import annotations

import argparse
import json

from rredcot_viz.cli.command import Command, commands
from rredcot_viz.cli.options import add_input_arguments, input_options


def _configure_import(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="dataset file (JSON, JSON array or JSONL)")
    add_input_arguments(parser)
    parser.add_argument("--limit", type=int, help="read at most this many records")
    parser.add_argument("--out", help="write the imported traces as our JSONL schema to this file")
    parser.add_argument("--show-issues", type=int, default=10, help="how many problems to list (default 10)")


def _run_import(args: argparse.Namespace) -> int:
    from rredcot_viz.traces.importers import import_file
    from rredcot_viz.traces.io import write_jsonl

    report = import_file(args.file, args.format, args.limit, **input_options(args))
    summary = report.summary()
    for key, value in summary.items():
        print(f"{key:24s} {value}")
    for issue in report.issues[: args.show_issues]:
        print(f"problem: {issue}")
    if len(report.issues) > args.show_issues:
        print(f"... and {len(report.issues) - args.show_issues} more problems")
    if args.out:
        written = write_jsonl(report.traces, args.out)
        print(f"wrote {written} traces to {args.out}")
    if report.traces:
        first = report.traces[0]
        preview = {"question": first.question[:80], "answer": first.answer, "reference": first.reference_answer}
        print("first trace:", json.dumps(preview, ensure_ascii=False))
    return 0 if report.traces or not report.records_read else 1


commands.register("import")(
    Command(
        "read a dataset file in any supported format; print a summary, optionally write our JSONL",
        _configure_import,
        _run_import,
    )
)


def _configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="a store table (traces, scores, rollouts, results, runs, ...) or a SELECT query")
    parser.add_argument("out", help="output file; .parquet, .csv or .jsonl")


def _run_export(args: argparse.Namespace) -> int:
    from rredcot_viz.store import Store

    store = Store()
    path = store.export(args.source, args.out)
    print(f"wrote {path} from {args.source!r} in {store.path}")
    return 0


commands.register("export")(
    Command("export a store table or SELECT query to parquet, CSV or JSONL", _configure_export, _run_export)
)
