"""Dataset-level analysis: run one segmenter and estimator over many traces and aggregate the results
(sigma by relative position, agreement distributions, per-source views). Used by the Dataset page and
by batch analysis; every per-trace result is stored, so a run can be reopened without the model."""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rredcot_viz.attribution.agreement import spearman
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.settings import config_json
from rredcot_viz.traces.importers.rollouts import ROLLOUT_KEY
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.compare import compare

if TYPE_CHECKING:
    from rredcot_viz.store import Store


@dataclass
class DatasetRecord:
    trace_hash: str
    trace_id: str | None
    source: str
    outcome: float | None
    k: int = 0
    sigma: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    positions: list[float] = field(default_factory=list)  # each segment's middle token, as a share of the region
    segment_chars: list[list[int]] = field(default_factory=list)  # each segment's [start, end) in the response
    tokens: int = 0
    first_error_label: int | None = None
    agreement: dict[str, float] = field(default_factory=dict)  # spearman(sigma, other method's scores)
    seconds: float = 0.0
    error: str | None = None

    @property
    def argmin_sigma(self) -> int | None:
        return int(np.argmin(self.sigma)) if self.sigma else None


def analyze_dataset(
    analyzer: Analyzer,
    traces: list[Trace],
    segmenter: Segmenter,
    estimator: ValueEstimator,
    agreement_with: tuple[str, ...] = (),
    progress: Any = None,
) -> list[DatasetRecord]:
    """One record per trace; a trace the estimator cannot run on gets a record with its error message, and when
    every trace failed the analysis fails with the first message (a job of nothing but errors is no result)."""
    records = []
    for done, trace in enumerate(traces, start=1):
        record = DatasetRecord(
            trace.content_hash, trace.trace_id, trace.source, trace.outcome, first_error_label=trace.first_error
        )
        try:
            methods = [estimator.name, *agreement_with]
            comparison = compare(analyzer, trace, segmenter, methods, {estimator.name: asdict(estimator.config)})
            result = comparison.methods[estimator.name]
            segments = comparison.segmentation.segments
            region = segments[-1].token_span[1]
            record.k = len(segments)
            record.sigma = result.scores.tolist()
            record.values = result.values.tolist()
            record.positions = [(s.token_span[0] + s.token_span[1]) / 2 / region for s in segments]
            record.segment_chars = [list(s.char_span) for s in segments]
            record.tokens = region
            record.agreement = {m: spearman(result.scores, comparison.methods[m].scores) for m in agreement_with}
            record.seconds = sum(r.cost.seconds for r in comparison.methods.values())
        except RredcotError as error:
            record.error = str(error)
        records.append(record)
        if progress:
            progress(done, len(traces))
    if records and all(record.error is not None for record in records):
        raise RredcotError(f"all {len(records)} traces failed; the first: {records[0].error}")
    return records


def records_frame(records: list[DatasetRecord]) -> pd.DataFrame:
    """One row per trace, for the sortable table."""
    rows = []
    for r in records:
        row = {
            "trace": r.trace_id or r.trace_hash[:12],
            "source": r.source,
            "outcome": r.outcome,
            "K": r.k,
            "tokens": r.tokens,
            "sum sigma": round(sum(r.sigma), 6) if r.sigma else math.nan,
            "min sigma at": (r.argmin_sigma + 1) if r.sigma else None,
            "labelled first error": _first_error_text(r.first_error_label),
            **{f"rho vs {m}": v for m, v in r.agreement.items()},
            "error": r.error or "",
            "hash": r.trace_hash,
        }
        rows.append(row)
    return pd.DataFrame(rows)


def export_frame(store: Store, run_id: str) -> pd.DataFrame:
    """A dataset run as a file to read without the app: each trace's table row (``records_frame``) with its
    question and response, how it was scored (model, precision, segmenter, estimator), its per-segment sigma and
    values (JSON lists), and for an RL rollout its step and reward."""
    run = store.run(run_id) or {}
    settings = run.get("settings") or {}
    records = load_run(store, run_id)
    traces = store.traces_by_hash([r.trace_hash for r in records])
    frame = records_frame(records)
    rollouts = [(traces[r.trace_hash].metadata.get(ROLLOUT_KEY) or {}) if r.trace_hash in traces else {}
                for r in records]  # fmt: skip
    about = {
        "question": [traces[r.trace_hash].question if r.trace_hash in traces else "" for r in records],
        "response": [traces[r.trace_hash].cot if r.trace_hash in traces else "" for r in records],
        "step": [rollout.get("step") for rollout in rollouts],
        "reward": [rollout.get("reward") for rollout in rollouts],
        "model": run.get("model_name"),
        "model_fingerprint": run.get("model_fingerprint"),
        "quantization": run.get("quantization"),
        "segmenter": settings.get("segmenter"),
        "estimator": settings.get("estimator"),
        "sigma": [json.dumps(r.sigma) for r in records],
        "values": [json.dumps(r.values) for r in records],
    }
    return frame.assign(**about)


def _first_error_text(label: int | None) -> str:
    """A labelled first error as the table shows it: the 1-based step, "none" for a trace labelled correct, or
    empty when the trace carries no label."""
    if label is None:
        return ""
    return "none" if label < 0 else str(label + 1)


def run_settings(store: Store, run_id: str) -> dict[str, Any]:
    """The segmenter and estimator (names and configs) a dataset run used."""
    run = store.run(run_id)
    return dict(run["settings"]) if run is not None and run["settings"] else {}


def position_points(records: list[DatasetRecord], outcome: float | None = None) -> tuple[list[float], list[float]]:
    """(relative position, sigma) of every segment of every record (optionally of one outcome)."""
    positions, sigmas = [], []
    for r in records:
        if r.error is None and (outcome is None or r.outcome == outcome):
            positions.extend(r.positions)
            sigmas.extend(r.sigma)
    return positions, sigmas


def settings_of(segmenter: Segmenter, estimator: ValueEstimator, label: str) -> dict[str, Any]:
    """What a dataset run records of how it was made (with the model's row, what makes two runs the same)."""
    return {
        "label": label,
        "segmenter": segmenter.name,
        "segmenter_config": json.loads(config_json(segmenter.config)),
        "estimator": estimator.name,
        "estimator_config": json.loads(config_json(estimator.config)),
    }


def dataset_run_id(model_info: dict[str, Any], settings: dict[str, Any], trace_hashes: list[str]) -> str:
    """The id of a dataset run that is named by what it computes (the model, its precision, the settings and
    the traces in order): a rerun of the same analysis finds it instead of storing it twice."""
    model = {k: model_info.get(k) for k in ("name", "fingerprint", "quantization", "dtype")}
    identity = json.dumps([model, settings, trace_hashes], sort_keys=True, default=str)
    return f"dataset-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def save_run(
    store: Store,
    model_info: dict[str, Any],
    segmenter: Segmenter,
    estimator: ValueEstimator,
    records: list[DatasetRecord],
    label: str,
    run_id: str | None = None,
) -> str:
    """Store ``records`` as a finished dataset run (``run_id``: one already started with ``put_run``)."""
    run_id = run_id or f"dataset-{uuid.uuid4().hex[:10]}"
    settings = settings_of(segmenter, estimator, label)
    store.put_run(run_id, "dataset", model_info, settings, None)
    for record in records:
        store.put_result(
            f"{run_id}:{record.trace_hash}",
            "",
            "dataset",
            estimator.name,
            settings,
            asdict(record),
            {"seconds": record.seconds},
        )
    errors = sum(r.error is not None for r in records)
    store.finish_run(
        run_id,
        "done",
        {"traces": len(records), "errors": errors, "label": label},
        {"seconds": sum(r.seconds for r in records)},
    )
    return run_id


def load_run(store: Store, run_id: str) -> list[DatasetRecord]:
    return [DatasetRecord(**payload) for payload in store.dataset_records(run_id)]


def dataset_runs(store: Store) -> pd.DataFrame:
    return store.dataset_runs()
