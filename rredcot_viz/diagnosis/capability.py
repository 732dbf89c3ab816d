"""The capability check that runs before any model work: for each method (detector or estimator), on how many
records it can run, with which of its options, and what the others lack. It reads trace fields only
(``traces.needs``), so a file of thousands of records is checked in well under a second, and no method fails
per trace after minutes of work for a reason that was known up front."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rredcot_viz.errors import RredcotError
from rredcot_viz.traces.needs import NEED_TEXT
from rredcot_viz.traces.trace import Trace


@dataclass
class Capability:
    name: str
    total: int
    runnable: list[int]  # indices of the records it can run on
    lacking: Counter[str] = field(default_factory=Counter)  # need -> records without it
    modes: Counter[str] = field(default_factory=Counter)  # option -> runnable records that get it
    wanted: Counter[str] = field(default_factory=Counter)  # option -> records that would get it but lack a need
    uses: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return len(self.runnable) == self.total

    @property
    def label(self) -> str:
        """The name shown in tables: with the option(s) its records got, e.g. ``min_sigma[answer_only]``."""
        modes = self.modes or self.wanted
        return f"{self.name}[{'/'.join(sorted(modes))}]" if modes else self.name

    def line(self) -> str:
        modes = ", ".join(f"{mode} {count}" for mode, count in self.modes.most_common())
        text = f"{self.label}: runs on {len(self.runnable)} of {self.total} records"
        if modes and len(self.modes) > 1:
            text += f" ({modes})"
        if self.lacking:
            lacks = "; ".join(f"{count} lack {NEED_TEXT[need]}" for need, count in self.lacking.most_common())
            text += f"; {lacks}"
        return text

    def row(self) -> dict[str, Any]:
        return {
            "method": self.label,
            "runnable": len(self.runnable),
            "of": self.total,
            "what the others lack": "; ".join(f"{n} {need}" for need, n in self.lacking.most_common()) or "",
            "uses": ", ".join(self.uses),
        }


def capability(method: Any, traces: list[Trace]) -> Capability:
    """What ``method`` (a detector or an estimator instance: ``missing(trace)``, optional ``mode(trace)``) can
    run on among ``traces``."""
    report = Capability(method.name, len(traces), [], uses=tuple(getattr(method, "uses", ("scoring",))))
    mode = getattr(method, "mode", lambda _trace: None)
    for index, trace in enumerate(traces):
        lacking = method.missing(trace)
        chosen = mode(trace)
        if lacking:
            report.lacking.update(lacking)
            report.wanted.update([chosen] if chosen else [])
            continue
        report.runnable.append(index)
        if chosen:
            report.modes[chosen] += 1
    return report


def check_all(methods: list[Any], traces: list[Trace], strict: bool = False) -> list[Capability]:
    """Each method's capability; with ``strict``, raise when any cannot run on every record."""
    reports = [capability(method, traces) for method in methods]
    short = [r for r in reports if not r.complete]
    if strict and short:
        raise RredcotError("--strict: not every method can run on every record: " + " | ".join(r.line() for r in short))
    return reports
