"""``python -m rredcot_viz``: subcommands, one registered ``Command`` per file group.

Errors the library raises on purpose (``RredcotError``) are printed as one clear line, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.errors import RredcotError

__all__ = ["Command", "ProgressBars", "build_parser", "commands", "main"]


def build_parser() -> argparse.ArgumentParser:
    from rredcot_viz.cli import (  # noqa: F401  (each module registers its commands)
        analysis_commands,
        batch_commands,
        data_commands,
        diagnosis_commands,
        model_commands,
        training_commands,
    )

    parser = argparse.ArgumentParser(prog="python -m rredcot_viz", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the library does")
    parser.add_argument("--store", help="DuckDB store file (default: $RREDCOT_STORE or data/rredcot.duckdb)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in commands.names():
        command = commands.get(name)
        command.configure(sub.add_parser(name, help=command.help, description=command.help))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    if args.store:
        os.environ["RREDCOT_STORE"] = args.store
    try:
        return commands.get(args.command).run(args)
    except RredcotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
