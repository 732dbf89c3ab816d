"""Reading and writing traces in our own JSONL schema, and the project's sample traces."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from rredcot_viz.files import atomic_write
from rredcot_viz.paths import SAMPLE_TRACES_DIR
from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.trace import Trace


def write_jsonl(traces: Iterable[Trace], path: str | Path) -> int:
    """Write traces in our schema; an existing file is replaced only once every trace is written."""
    count = 0
    with atomic_write(path) as sink:
        for trace in traces:
            sink.write(json.dumps(trace.to_dict(), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_jsonl(path: str | Path) -> list[Trace]:
    """Traces of a native JSONL file; raises on the first bad record (use ``import_file`` for reports)."""
    report = import_file(path, "native")
    if report.issues:
        raise ValueError("; ".join(str(issue) for issue in report.issues[:5]))
    return report.traces


def sample_traces(directory: Path = SAMPLE_TRACES_DIR) -> list[Trace]:
    """The traces the project ships (written for it or generated with the embedded model), in file order."""
    traces: list[Trace] = []
    for path in sorted(directory.glob("*.jsonl")):
        traces.extend(read_jsonl(path))
    return traces
