"""Analysing traces: in the app one trace at a time without ever restarting long work from zero, from the CLI a
file's traces after checking what they can feed (``check_traces``, ``analyze_traces``, ``write_results``).

An analysis whose scores are all cached is computed on the spot (no model call). Otherwise it runs as a
background job, keyed by the scoring work it does (the trace under the model and prompt, the estimator's
series, the boundaries the first call scores), so every tab, and every widget change that needs the same
scores (another K, another aggregation or variant, another text segmenter among the candidates), finds the
same job instead of starting one. The model hands over each packed chunk of scores as it finishes and the
cache keeps it, so a cancelled or interrupted job resumes from what it scored. On a trace's first analysis
R-hat (a few short continuations) is scored first, so a first look is there in seconds while v-hat's long
reference paths fill in.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rredcot_viz.diagnosis.capability import Capability, check_all
from rredcot_viz.engine.analyzer import AnalysisResult, Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.base import R_HAT_ALONE, ValueEstimator
from rredcot_viz.files import atomic_write, spreadsheet_cell
from rredcot_viz.jobs import Job, JobManager
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.settings import config_json
from rredcot_viz.traces.needs import NEED_TEXT
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import content_key

FINISHED = ("failed", "cancelled", "interrupted")


def provenance(analyzer: Analyzer, segmenter: Segmenter, settings: dict[str, Any]) -> dict[str, str]:
    """What an exported table was computed with: the model (name and fingerprint), the segmenter and the
    analysis settings, as columns every exported row carries (so a CSV read later names its source)."""
    info = analyzer.lm.info()
    return {
        "model": str(info["name"]),
        "model_fingerprint": str(info["fingerprint"]),
        "segmenter": segmenter.name,
        "segmenter_settings": config_json(segmenter.config),
        "analysis_settings": config_json(analyzer.config),
        "method_settings": json.dumps(settings, sort_keys=True, default=str),
    }


@dataclass(frozen=True)
class AnalysisWork:
    """One analysis the app asks for: what it needs and what of that is still to compute."""

    analyzer: Analyzer
    trace: Trace
    segmenter: Segmenter
    estimator: ValueEstimator

    def __post_init__(self) -> None:
        self.estimator.check(self.trace)  # refused when asked for, with what the trace lacks, before any scoring

    @property
    def key(self) -> str:
        """Names the scoring work, not the view: settings that reuse the same scores share the key."""
        context = self.analyzer.context(self.trace)
        candidates = sorted(self.analyzer.candidate_prefixes(context, self.segmenter))
        series = [(s.name, s.context, s.target, s.per_state) for s in self.estimator.series(context)]
        if series:
            return content_key("analysis", context.key, series, candidates)
        # an estimator that samples (Monte Carlo) works on the segmenter's states: its settings name the work
        setup = [(x.name, config_json(x.config)) for x in (self.estimator, self.segmenter)]
        return content_key("analysis", context.key, setup, self.analyzer.config.scope, *context.sampler.key)

    @property
    def pending(self) -> int:
        return self.analyzer.pending(self.trace, self.segmenter, self.estimator)

    def result(self) -> AnalysisResult:
        """The analysis (instant once ``pending`` is 0)."""
        return self.analyzer.analyze(self.trace, self.segmenter, self.estimator)

    def first_look_ready(self) -> bool:
        """Whether R-hat's scores alone are cached (a first look is possible, with no model call)."""
        if "reference_solution" not in self.estimator.needs:
            return False
        return not self.analyzer.pending(self.trace, self.segmenter, self.first_look_estimator())

    def first_look(self) -> AnalysisResult | None:
        """R-hat alone on the same segments when its scores are cached and the full analysis is not yet."""
        if not self.first_look_ready():
            return None
        return self.analyzer.analyze(self.trace, self.segmenter, self.first_look_estimator())

    def first_look_estimator(self) -> ValueEstimator:
        """R-hat alone, aggregated as the chosen estimator aggregates (its own default where it has none)."""
        aggregation = getattr(self.estimator.config, "aggregation", None)
        options = {} if aggregation is None else {"aggregation": aggregation}
        return estimators.get(R_HAT_ALONE)(**options)

    def run(self, job: Job) -> None:
        """The job's body. A trace seen for the first time gets R-hat's scores (and the token stats) in a call of
        their own first, for the first look; v-hat's long reference paths come after."""

        def report(phase: str):
            return lambda done, total: job.progress(done, total, phase)

        first_time = not self.analyzer.context(self.trace).has_stats
        if first_time and "reference_solution" in self.estimator.needs:
            self.analyzer.precompute(self.trace, self.segmenter, self.first_look_estimator(), report("R̂"))
        self.analyzer.analyze(self.trace, self.segmenter, self.estimator, report("all values"))


def start(work: AnalysisWork, jobs: JobManager) -> Job:
    """The job computing ``work``: the running or finished one any tab started for the same key, or a new one
    (also when the last one failed, was cancelled or was interrupted: it resumes from what was cached)."""
    key = work.key
    job = jobs.latest(key)
    if job is None or job.status in FINISHED or (job.status == "done" and work.pending):
        label = f"Analysis of “{work.trace.display_name}”"
        job = jobs.submit(label, work.run, kind="analysis", key=key, unit="chunks")
    return job


@dataclass
class TraceCheck:
    """Which traces an estimator can run on, from the traces' fields alone (before any model work)."""

    estimator: ValueEstimator
    report: Capability
    runnable: list[Trace]
    skipped: list[Trace]
    alternatives: list[str]  # estimators that can run on every skipped trace

    def lines(self) -> list[str]:
        """The check as it is reported: the capability line, then the skipped traces and what could run them."""
        lines = [f"capability check: {self.report.line()}"]
        if self.skipped:
            names = ", ".join(t.trace_id or t.short_id for t in self.skipped[:5])
            hint = f"; --estimator {' or '.join(self.alternatives)} can run on them" if self.alternatives else ""
            lines.append(f"skipping {len(self.skipped)}: {names}{hint}")
        return lines

    def refusal(self) -> str | None:
        """Why the estimator cannot run on any of the traces (what they lack, what could run them); None when it
        can run on some."""
        if self.runnable:
            return None
        lacks = "; ".join(f"{count} lack {NEED_TEXT[need]}" for need, count in self.report.lacking.most_common())
        others = f"; {', '.join(self.alternatives)} can run on them" if self.alternatives else ""
        return f"estimator {self.estimator.name!r} cannot run on any of the {len(self.skipped)} traces: {lacks}{others}"

    def require(self) -> list[Trace]:
        """The runnable traces; an error saying why (``refusal``) when there are none."""
        refusal = self.refusal()
        if refusal:
            raise RredcotError(refusal)
        return self.runnable


def check_traces(traces: list[Trace], estimator: ValueEstimator, strict: bool = False) -> TraceCheck:
    """What ``estimator`` can run on among ``traces``; with ``strict``, an error when it cannot run on all."""
    (report,) = check_all([estimator], traces, strict)
    runnable = set(report.runnable)
    skipped = [trace for index, trace in enumerate(traces) if index not in runnable]
    offered = [n for n in estimators.names() if not estimators.get(n).fitted]  # a value probe may not exist here
    alternatives = [n for n in offered if not any(estimators.get(n)().missing(t) for t in skipped)]
    return TraceCheck(estimator, report, [traces[i] for i in report.runnable], skipped, alternatives if skipped else [])


def analyze_traces(
    analyzer: Analyzer,
    traces: Iterable[Trace],
    segmenter: Segmenter,
    estimator: ValueEstimator,
    progress_for: Callable[[Trace], ProgressFn | None] = lambda _trace: None,
) -> Iterator[AnalysisResult]:
    """Each trace's analysis in turn (``progress_for(trace)`` reports on its scoring), as it finishes."""
    for trace in traces:
        yield analyzer.analyze(trace, segmenter, estimator, progress=progress_for(trace))


def write_results(results: list[AnalysisResult], path: Path) -> None:
    """``.csv``: one row per segment (``AnalysisResult.export_rows``), text a spreadsheet would run as a formula
    behind a ``'``; else JSON lines, one record per trace (``AnalysisResult.record``)."""
    if path.suffix == ".csv":
        with atomic_write(path, newline="") as sink:
            writer = None
            for row in (row for result in results for row in result.export_rows()):
                if writer is None:
                    writer = csv.DictWriter(sink, fieldnames=list(row))
                    writer.writeheader()
                writer.writerow({name: spreadsheet_cell(value) for name, value in row.items()})
    else:
        with atomic_write(path) as sink:
            for result in results:
                sink.write(json.dumps(result.record(), ensure_ascii=False) + "\n")
