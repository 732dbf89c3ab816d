"""``python -m rredcot_viz``: subcommands, one registered ``Command`` per file group.

Errors the library raises on purpose (``RredcotError``) are printed as one clear line, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from rredcot_viz.errors import RredcotError
from rredcot_viz.registry import Registry


@dataclass(frozen=True)
class Command:
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


commands: Registry[Command] = Registry("command")


class ProgressBars:
    """One progress bar at a time, for library calls that report ``progress(done, total)``."""

    def __init__(self) -> None:
        self.bar = None
        self.label: str | None = None

    def callback(self, label: str) -> Callable[[int, int], None]:
        return lambda done, total: self.update(label, done, total)

    def update(self, label: str, done: int, total: int) -> None:
        from tqdm import tqdm

        if self.bar is None or self.label != label:
            self.close()  # a resumed run's bar starts where it is, so its rate counts only this process's work
            bar = tqdm(total=total, initial=done, desc=label, unit="step", leave=False, file=sys.stderr)
            self.bar, self.label = bar, label
        self.bar.total = total
        self.bar.update(done - self.bar.n)

    def write(self, line: str) -> None:
        """Print a line above the bar, which stays (one bar per run, not one per evaluation)."""
        from tqdm import tqdm

        if self.bar is None:
            print(line, flush=True)
        else:
            tqdm.write(line, file=sys.stdout)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar = None


def build_parser() -> argparse.ArgumentParser:
    from rredcot_viz.cli import (  # noqa: F401  (each module registers its commands)
        analysis_commands,
        batch_commands,
        data_commands,
        diagnosis_commands,
        model_commands,
        report_commands,
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
