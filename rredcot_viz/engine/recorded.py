"""Analyses recorded with a stronger model than the one loaded, shipped beside the sample traces.

On the samples the embedded SmolLM2-135M's value curves jump mostly where the answer is written, so a first
look at them would teach the wrong lesson. ``scripts/record_scores.py`` analyses every sample
with the opt-in Qwen2.5-Coder-1.5B (default segmenter and estimator) and stores, per trace, only what the
Inspect page draws: the segments' character and token spans, the state values and their components, and
sigma, with the model's id and file hash and the settings. ``recorded_result`` turns one back into an
``AnalysisResult`` (no model involved); a trace whose text changed since the recording gets none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rredcot_viz.engine.analyzer import AnalysisResult
from rredcot_viz.files import write_text
from rredcot_viz.paths import SAMPLE_TRACES_DIR
from rredcot_viz.segmenters.base import Segment, Segmentation
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost, StateValues

RECORDED_FILE = SAMPLE_TRACES_DIR / "recorded_scores.json"
COMPONENTS = ("R_hat", "v_hat", "Q_model")


@dataclass(frozen=True)
class Recording:
    """Who recorded the scores and how (shown beside them)."""

    model: str  # a label for people, e.g. "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)"
    fingerprint: str  # the model file's hash
    settings: dict[str, Any]  # segmenter, estimator and variant, as their configs print

    @property
    def label(self) -> str:
        return f"recorded with {self.model}"


def record(result: AnalysisResult) -> dict[str, Any]:
    """The JSON of one analysis: spans, values, components and sigma (no text: it is the trace's)."""
    return {
        "content_hash": result.trace.content_hash,
        "strategy": result.segmentation.strategy,
        "segments": [
            {"char_span": list(s.char_span), "token_span": list(s.token_span), "boundary": s.boundary_kind}
            for s in result.segmentation.segments
        ],
        "values": [round(float(v), 6) for v in result.values.values],
        "components": {
            name: [round(float(v), 6) for v in result.values.components[name]]
            for name in COMPONENTS
            if name in result.values.components
        },
        "sigma": [round(float(v), 6) for v in result.sigma],
        "variant": result.variant,
        "estimator": result.values.estimator,
    }


def save_recordings(path: Path, recording: Recording, results: dict[str, AnalysisResult]) -> None:
    """Write every trace's record keyed by trace id, with who recorded them and how."""
    payload = {
        "model": recording.model,
        "fingerprint": recording.fingerprint,
        "settings": recording.settings,
        "traces": {trace_id: record(result) for trace_id, result in sorted(results.items())},
    }
    write_text(path, json.dumps(payload, indent=1, ensure_ascii=False) + "\n")


def load_recordings(path: Path | None = None) -> tuple[Recording, dict[str, dict[str, Any]]] | None:
    """The recordings at ``path`` (default: the shipped file), or None when there are none."""
    path = RECORDED_FILE if path is None else path
    if not path.is_file():
        return None
    payload = json.loads(path.read_text())
    return Recording(payload["model"], payload["fingerprint"], payload["settings"]), payload["traces"]


def recorded_result(trace: Trace, path: Path | None = None) -> tuple[Recording, AnalysisResult] | None:
    """The recorded analysis of ``trace`` (matched by id and by content hash), or None."""
    loaded = load_recordings(path)
    if loaded is None or trace.trace_id is None:
        return None
    recording, traces = loaded
    entry = traces.get(trace.trace_id)
    if entry is None or entry["content_hash"] != trace.content_hash:
        return None
    segments = []
    for index, item in enumerate(entry["segments"]):
        start, end = item["char_span"]
        segments.append(
            Segment(index, trace.cot[start:end], (start, end), tuple(item["token_span"]), item["boundary"], 0, 0, 0, 0)
        )
    cuts = tuple(s.token_span[0] for s in segments[1:])
    segmentation = Segmentation(entry["strategy"], cuts, segments)
    components = {name: np.array(values) for name, values in entry["components"].items()}
    values = StateValues(entry["estimator"], np.array(entry["values"]), components)
    result = AnalysisResult(trace, segmentation, values, np.array(entry["sigma"]), entry["variant"], CallCost())
    return recording, result
