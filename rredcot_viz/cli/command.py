"""What every command module registers with (``Command``, the ``commands`` registry) and the progress bars they
share; the package's ``__init__`` loads the command modules and runs the chosen one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass

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
