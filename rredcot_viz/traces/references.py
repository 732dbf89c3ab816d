"""Attaching reference answers and solutions to traces that lack them, by question text.

ProcessBench records carry no reference; its GSM8K split's problems are the GSM8K test questions, so the
GSM8K file supplies Y* and the rationale U* (all 400 match on whitespace- and case-normalised text).
"""

from __future__ import annotations

from pathlib import Path

from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.trace import Trace


def _key(text: str) -> str:
    return " ".join(text.split()).lower()


def attach_references(traces: list[Trace], reference_file: str | Path) -> tuple[list[Trace], int]:
    """Traces with reference answer/solution filled in from ``reference_file`` where the question matches
    (existing references are kept); returns the traces and how many were matched."""
    references = {_key(t.question): t for t in import_file(reference_file).traces}
    out, matched = [], 0
    for trace in traces:
        reference = references.get(_key(trace.question))
        if reference is None:
            out.append(trace)
            continue
        matched += 1
        out.append(
            trace.with_changes(
                reference_answer=trace.reference_answer or reference.reference_answer,
                reference_solution=trace.reference_solution or reference.reference_solution,
            )
        )
    return out, matched
