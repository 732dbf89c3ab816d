"""Batch analysis of large trace sets, sharded across processes (one model replica each, e.g. one per GPU).

Each process analyses every ``count``-th trace starting at its ``index`` and writes its records as parquet
part files under the output folder every few traces, so an interrupted run resumes by skipping the traces
whose content hash is already in a part file. Part files carry everything a ``DatasetRecord`` holds (its
JSON) plus flat columns for other tools; ``merge_parts`` writes ``merged.parquet`` in the dataset's order,
which ``import_merged`` turns into a stored dataset run that the app's Dataset page opens.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.files import atomic_path, write_text
from rredcot_viz.model.meter import measure
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.dataset import DatasetRecord, analyze_dataset, save_run

if TYPE_CHECKING:
    from rredcot_viz.store import Store

MERGED = "merged.parquet"


def shard(traces: list[Trace], index: int, count: int) -> list[Trace]:
    """The traces process ``index`` of ``count`` analyses (round robin: shards stay balanced in length)."""
    if not 0 <= index < count:
        raise ConfigError(f"process index {index} is outside 0..{count - 1}")
    return traces[index::count]


def done_hashes(out_dir: Path) -> set[str]:
    """Content hashes of the traces some part file under ``out_dir`` already holds."""
    hashes: set[str] = set()
    for part in sorted(out_dir.glob("part-*.parquet")):
        hashes.update(pd.read_parquet(part, columns=["trace_hash"])["trace_hash"])
    return hashes


def _frame(records: list[DatasetRecord], rank: int) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "trace_hash": r.trace_hash,
                "trace_id": r.trace_id,
                "source": r.source,
                "outcome": r.outcome,
                "k": r.k,
                "tokens": r.tokens,
                "sigma": r.sigma,
                "values": r.values,
                "error": r.error,
                "seconds": r.seconds,
                "process": rank,
                "record": json.dumps(asdict(r)),
            }
            for r in records
        ]
    )


def run_shard(
    analyzer: Analyzer,
    traces: list[Trace],
    segmenter: Segmenter,
    estimator: ValueEstimator,
    out_dir: Path,
    rank: int = 0,
    flush_every: int = 8,
    agreement_with: tuple[str, ...] = (),
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Analyse the traces of this shard not yet done, writing part files; returns this process's throughput."""
    out_dir.mkdir(parents=True, exist_ok=True)
    done = done_hashes(out_dir)
    todo = [t for t in traces if t.content_hash not in done]
    started = time.perf_counter()
    with measure() as spent:
        for start in range(0, len(todo), flush_every):
            chunk = todo[start : start + flush_every]
            records = analyze_dataset(analyzer, chunk, segmenter, estimator, agreement_with)
            stamp = f"{time.time_ns():x}"
            with atomic_path(out_dir / f"part-r{rank:03d}-{stamp}.parquet") as partial:
                _frame(records, rank).to_parquet(partial, index=False)
            if progress:
                progress(start + len(chunk), len(todo))
    seconds = time.perf_counter() - started
    tokens = spent.cost.tokens_processed
    throughput = {
        "process": rank,
        "traces": len(todo),
        "skipped": len(traces) - len(todo),
        "seconds": round(seconds, 3),
        "tokens": tokens,
        "traces_per_s": round(len(todo) / seconds, 4) if seconds else 0.0,
        "tokens_per_s": round(tokens / seconds, 1) if seconds else 0.0,
    }
    write_text(out_dir / f"throughput-r{rank:03d}.json", json.dumps(throughput))
    return throughput


def merge_parts(out_dir: Path, traces: list[Trace]) -> pd.DataFrame:
    """One row per trace of ``traces`` (in their order) from the part files; writes ``merged.parquet``."""
    parts = [pd.read_parquet(p) for p in sorted(out_dir.glob("part-*.parquet"))]
    if not parts:
        raise ConfigError(f"no part files under {out_dir}; run the analysis first")
    rows = pd.concat(parts, ignore_index=True).drop_duplicates("trace_hash", keep="last").set_index("trace_hash")
    order = [t.content_hash for t in traces]
    missing = [h for h in order if h not in rows.index]
    if missing:
        raise ConfigError(f"{len(missing)} of {len(order)} traces have no result yet; run the analysis again")
    merged = rows.loc[order].reset_index()
    with atomic_path(out_dir / MERGED) as partial:
        merged.to_parquet(partial, index=False)
    return merged


def merged_records(merged: pd.DataFrame) -> list[DatasetRecord]:
    return [DatasetRecord(**json.loads(payload)) for payload in merged["record"]]


def import_merged(
    store: Store,
    merged: pd.DataFrame,
    model_info: dict,
    segmenter: Segmenter,
    estimator: ValueEstimator,
    label: str,
    run_id: str | None = None,
) -> str:
    """Store the merged result as a dataset run (the Dataset page lists it); returns the run id."""
    return save_run(store, model_info, segmenter, estimator, merged_records(merged), label, run_id)


def throughputs(out_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out_dir.glob("throughput-r*.json"))]
