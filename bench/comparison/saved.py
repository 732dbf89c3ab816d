"""The compare bench's saved file: each scored trace as a record, the protocol a resumed run must match."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from comparison.rows import LEAN_MC_NS, PROTOCOL, REFERENCE_N, SAVED_BEFORE, TraceResult, default_row
from comparison.scoring import segmenter_of
from rredcot_viz.estimators.rredcot import RREDCoTConfig
from rredcot_viz.traces.answers import GRADING
from rredcot_viz.traces.trace import Trace


def record(result: TraceResult, mc_max_tokens: int) -> dict:
    return {
        "trace": result.trace.trace_id,
        "problem": result.problem,
        "split": result.split,
        "cot": result.trace.cot,
        "outcome": result.trace.outcome,
        "own_answer": result.trace.answer,
        "reference_answer": result.trace.reference_answer,
        "k": result.k,
        "mc16_values": result.reference_values.tolist(),
        "mc16_sigma": result.reference.tolist(),
        "scores": {name: v.tolist() for name, v in result.scores.items()},
        "tokens": result.tokens,
        "seconds": result.seconds,
        "rredcot_is": default_row(),
        "mc_max_new_tokens": mc_max_tokens,
        "truncated": result.truncated,
        "rollouts": result.rollouts,
        "mc_outcomes": result.outcomes,
        "wall_seconds": result.wall_seconds,
    }


def from_record(saved: dict) -> TraceResult:
    """A scored trace as saved, with 'rredcot' meaning today's defaults (the row it equalled is renamed)."""
    trace = Trace(
        "(not saved)",
        saved["cot"],
        correct=bool(saved["outcome"]),
        trace_id=saved["trace"],
        final_answer=saved.get("own_answer"),
        reference_answer=saved.get("reference_answer"),
    )
    result = TraceResult(
        trace,
        saved["problem"],
        saved["split"],
        saved["k"],
        np.asarray(saved["mc16_sigma"]),
        np.asarray(saved["mc16_values"]),
    )
    result.scores = {name: np.asarray(v) for name, v in saved["scores"].items()}
    result.tokens, result.seconds = dict(saved["tokens"]), dict(saved["seconds"])
    result.truncated, result.rollouts = saved.get("truncated", 0), saved.get("rollouts", 0)
    result.outcomes = saved.get("mc_outcomes", [])
    result.wall_seconds = saved.get("wall_seconds", 0.0)
    was, now = saved["rredcot_is"], default_row()
    if result.scores and was != now and now in result.scores:
        for table in (result.scores, result.tokens, result.seconds):
            table[was], table["rredcot"] = table.pop("rredcot"), table.pop(now)
    return result


def save(
    path: Path,
    protocol: dict,
    screened: list[dict],
    drawn: list[dict],
    results: list[TraceResult],
    in_progress: dict | None = None,
    extra: dict | None = None,
) -> None:
    """The whole run: protocol, screening, drawn and scored traces, and (``in_progress``) the trace being scored:
    its states' rollouts and its rows so far, so a stopped run resumes at the state where it stopped."""
    payload = {
        "protocol": protocol,
        "screened": screened,
        "drawn": drawn,
        "traces": [record(r, protocol["mc_max_tokens"]) for r in results],
    }
    if in_progress and any(in_progress.values()):
        payload["in_progress"] = in_progress
    payload |= extra or {}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(payload, indent=1))
    temporary.replace(path)  # a run stopped mid-write keeps the previous file whole


def protocol_of(args: argparse.Namespace) -> dict:
    """What must match for a resumed run to add to a saved one (the loaded precision is added after the load)."""
    protocol = {key: getattr(args, key) for key in PROTOCOL} | {"min_nonfinal": args.min_nonfinal, "grading": GRADING}
    if args.rows == "issue42":  # the estimator and segmenter settings, fixed before any scoring
        protocol["segmenter_settings"] = asdict(segmenter_of(args).config)
        protocol["estimator_settings"] = asdict(RREDCoTConfig())
        protocol["mc_ns"] = [REFERENCE_N, *LEAN_MC_NS]
    return json.loads(json.dumps(protocol))  # as saved (tuples are lists there), so a resume compares like with like


def protocol_mismatch(saved_protocol: dict, protocol: dict) -> dict:
    """The keys both protocols state, with different values (a key an older file lacks takes SAVED_BEFORE's)."""
    saved_protocol = SAVED_BEFORE | saved_protocol
    return {k: (saved_protocol[k], v) for k, v in protocol.items() if k in saved_protocol and saved_protocol[k] != v}
