"""``python -m rredcot_viz``: subcommands, one registered ``Command`` per file group.

Errors the library raises on purpose (``RredcotError``) are printed as one clear line, never a traceback.
Only the chosen subcommand's options are built (building one may import the model stack), and the command
modules import nothing heavy at the top, so ``import`` of a small file never loads torch. SIGTERM stops a
command the way Ctrl-C does (a training run is then recorded as stopped). A reader that stops early
(``import ... | head -5``) ends the command quietly, with the shell's status for SIGPIPE (141).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence

from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.errors import RredcotError

__all__ = ["Command", "ProgressBars", "build_parser", "commands", "main"]


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The parser, with the options of ``chosen`` only (every command's when None, e.g. for a reference)."""
    from rredcot_viz.cli import (  # noqa: F401  (each module registers its commands)
        analysis_commands,
        app_commands,
        batch_commands,
        data_commands,
        diagnosis_commands,
        model_commands,
        probe_commands,
        report_commands,
        training_commands,
    )

    parser = argparse.ArgumentParser(prog="python -m rredcot_viz", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the library does")
    parser.add_argument("--store", help="DuckDB store file (default: $RREDCOT_STORE or data/rredcot.duckdb)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in commands.names():
        command = commands.get(name)
        subparser = sub.add_parser(name, help=command.help, description=command.help)
        if chosen is None or name == chosen:
            command.configure(subparser)
    return parser


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not a global option or its value)."""
    words = iter(argv)
    for word in words:
        if word == "--store":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM raised where the process is, as Ctrl-C would be, so that ``finally`` blocks record the stop."""
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(chosen_command(argv)).parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    if args.store:
        os.environ["RREDCOT_STORE"] = args.store
    main_thread = threading.current_thread() is threading.main_thread()  # only it may set a signal handler
    previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
    try:
        code = commands.get(args.command).run(args)
        sys.stdout.flush()  # here, so that a reader gone early (| head) is caught below, not at exit
        return code
    except RredcotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush then has nowhere to fail
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt as interrupt:
        print(f"\nstopped ({interrupt or 'Ctrl-C'})", file=sys.stderr)
        return 143 if interrupt.args else 130
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
