"""Sharing a view: what a report is of (a stored run, a stored or sample trace, a trace in a file), the settings
it records, and writing the file so that a reader never sees half of it. The HTML itself is built by
``figures.report``; the ``report`` command and the pages' download buttons compose the two."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rredcot_viz.engine.analyzer import AnalysisConfig
from rredcot_viz.errors import RredcotError
from rredcot_viz.files import atomic_write
from rredcot_viz.settings import config_json
from rredcot_viz.traces.trace import Trace

if TYPE_CHECKING:
    from rredcot_viz.store import Store

MIN_HASH_PREFIX = 6
REPORT_MODE = 0o644


@dataclass(frozen=True)
class ReportTarget:
    """What ``report TRACE_OR_RUN`` names: a run (by id) or a trace."""

    run_id: str | None = None
    trace: Trace | None = None


def find_target(store: Store, wanted: str, samples: list[Trace]) -> ReportTarget:
    """A run id with stored rollouts, else a trace by id or content hash (a prefix of 6+ characters) in the store
    or the samples; an unknown or ambiguous name is a message saying what was looked for."""
    runs = store.rollout_runs()
    if len(runs) and wanted in set(runs["run_id"]):
        return ReportTarget(run_id=wanted)
    named = [t for t in samples if t.trace_id == wanted] + store.traces_named(wanted)  # any id it was imported as
    matches = list({t.content_hash: t for t in named}.values())
    if not matches and len(wanted) >= MIN_HASH_PREFIX:
        pool = {t.content_hash: t for t in [*samples, *store.traces()]}
        matches = [t for h, t in pool.items() if h.startswith(wanted.lower())]
    if len(matches) == 1:
        return ReportTarget(trace=matches[0])
    if len(matches) > 1:
        ids = ", ".join(t.short_id for t in matches[:5])
        raise RredcotError(f"{wanted!r} names {len(matches)} traces ({ids}); give a longer hash")
    raise RredcotError(
        f"{wanted!r} is not a run with stored rollouts, a trace id or a trace hash in the store {store.path} or the "
        "samples, nor a file; list runs with `export runs`, or give a dataset file and --trace"
    )


def analysis_settings(segmenter: Any, estimator: Any, config: AnalysisConfig) -> dict[str, Any]:
    """The settings a report records for an analysis: segmenter, estimator and analysis config, each with its
    settings (what someone needs to reproduce the view)."""
    return {
        "segmenter": segmenter.name,
        "segmenter settings": json.loads(config_json(segmenter.config)),
        "estimator": estimator.name,
        "estimator settings": json.loads(config_json(estimator.config)),
        "analysis": json.loads(config_json(config)),
    }


def report_name(kind: str, name: str) -> str:
    """A file name for a report: ``rredcot-<kind>-<name>.html`` with the name made safe for any file system."""
    return f"rredcot-{kind}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', name).strip('-')[:60] or 'report'}.html"


def write_report(html: str, out: str | Path) -> Path:
    """Write ``html`` atomically (a crash leaves the old file or none, never half a report), readable by the
    colleague it is for whatever the umask."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out) as sink:
        os.fchmod(sink.fileno(), REPORT_MODE)
        sink.write(html)
    return out
