"""Data subcommands: ``import``."""

from __future__ import annotations

import argparse
import json

from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.cli.options import (
    add_folder_arguments,
    add_input_arguments,
    at_least_one,
    folder_options,
    input_options,
)
from rredcot_viz.files import check_output_path


def _configure_import(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        help="a dataset file (JSON, JSONL, parquet, Arrow, CSV, TSV; gzip-compressed JSON is read as is) or a folder: "
        "a Hugging Face dataset, a TRL output_dir (its completions/*.parquet) or a verl rollout_data_dir "
        "(<step>.jsonl)",
    )
    add_input_arguments(parser)
    add_folder_arguments(parser)
    parser.add_argument("--limit", type=at_least_one, help="read at most this many records (default: all)")
    parser.add_argument("--out", help="write the imported traces as our JSONL schema to this file")
    parser.add_argument(
        "--collection",
        nargs="?",
        const="",
        help="also store the traces in the store, in this collection (default run:NAME for an RL run, "
        "dataset:NAME otherwise); an RL run's rollouts are stored as a run the Dataset page opens by step",
    )
    parser.add_argument("--show-issues", type=int, default=10, help="how many problems to list (default 10)")


def _run_import(args: argparse.Namespace) -> int:
    from rredcot_viz.traces.importers import import_file
    from rredcot_viz.traces.io import write_jsonl

    if args.out:
        check_output_path(args.out)
    report = import_file(args.file, args.format, args.limit, **input_options(args), **folder_options(args))
    summary = report.summary()
    for key, value in summary.items():
        print(f"{key:24s} {value}")
    for issue in report.issues[: args.show_issues]:
        print(f"problem: {issue}")
    if len(report.issues) > args.show_issues:
        print(f"... and {len(report.issues) - args.show_issues} more problems")
    for warning in report.warnings:
        print(f"warning: {warning}")
    if args.out:
        written = write_jsonl(report.traces, args.out)
        print(f"wrote {written} traces to {args.out}")
    if args.collection is not None and report.traces:
        from rredcot_viz.store import Store
        from rredcot_viz.workflows.imports import is_run, store_traces

        store = Store()
        bars = ProgressBars()
        stored = store_traces(store, report, args.collection or None, progress=bars.callback("storing traces"))
        bars.close()
        print(f"{stored}; store {store.path}")
        if is_run(report.traces):  # the run views need the ML stack: loaded only for a run
            from rredcot_viz.workflows.runs import store_run

            run = store_run(store, report, stored.collection)
            print(f"stored run {run.run_id}: {run.rollouts} rollouts, {run.steps} steps, {run.prompts} prompts")
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

    check_output_path(args.out, "export file")
    store = Store()
    path = store.export(args.source, args.out)
    print(f"wrote {path} from {args.source!r} in {store.path}")
    return 0


commands.register("export")(
    Command("export a store table or SELECT query to parquet, CSV or JSONL", _configure_export, _run_export)
)
