"""Verdicts looked up by content before they are computed (a self-localisation samples the model, so a page
rerun must not ask again), and the stored ProcessBench evaluation runs."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rredcot_viz.diagnosis.base import Detector, FirstError
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.settings import config_json
from rredcot_viz.traces.answers import GRADING
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost, content_key

if TYPE_CHECKING:
    from rredcot_viz.store import Store


def cached_verdict(
    analyzer: Analyzer, trace: Trace, segmenter: Segmenter, detector: Detector, progress: Any = None
) -> FirstError:
    """The detector's verdict, from the store when this (trace, model, detector, settings, cuts) was seen (then
    marked ``cached``, with the cost it had when it was computed)."""
    context = analyzer.context(trace)
    context.score_stats()  # entropies for the segmenter
    segmentation = analyzer.segment(trace, segmenter)
    key = content_key(
        "verdict",
        context.key,
        detector.name,
        config_json(detector.config),
        segmentation.cuts,
        segmentation.state_prefixes[-1],
        analyzer.config.variant,
        *analyzer.sampler.key,  # a sampling detector's verdict depends on where its rollouts came from
        *((GRADING,) if "sampling" in detector.uses else ()),  # and on how they are graded
    )
    stored = context.cache.result(context.key, key)
    if stored is not None:
        return FirstError(
            detector.name,
            stored["prediction"],
            np.array(stored["scores"]),
            stored["abstained"],
            stored["evidence"],
            CallCost(**stored.get("cost", {})),  # what it cost when it was computed (none for old records)
            cached=True,
            computed_at=stored.get("computed_at"),
        )
    verdict = detector.detect(analyzer, trace, segmenter, progress)
    payload = {
        "prediction": verdict.prediction,
        "scores": verdict.scores.tolist(),
        "abstained": verdict.abstained,
        "evidence": json.loads(json.dumps(verdict.evidence, default=float)),
        "cost": verdict.cost.as_dict(),
        "computed_at": time.time(),
    }
    context.cache.put_result(
        context.key,
        key,
        "verdict",
        detector.name,
        json.loads(config_json(detector.config)),
        payload,
        verdict.cost.as_dict(),
    )
    return verdict


def evaluation_runs(store: Store) -> pd.DataFrame:
    return store.evaluation_runs()


def load_evaluation(store: Store, run_id: str) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """The run's table (detectors and baselines) and each detector's predictions and labels."""
    evaluation = store.evaluation(run_id)
    if evaluation is None:
        raise RredcotError(f"no finished diagnosis run {run_id!r} in the store; pick one of evaluation_runs()")
    table, payloads = evaluation
    return pd.DataFrame(table), payloads


def confusion_matrix(predictions: list[int | None], labels: list[int], n_steps: list[int]) -> np.ndarray:
    """Counts of (labelled, predicted) first errors; index 0 = "no error", i = step i."""
    size = max(n_steps, default=0) + 1
    matrix = np.zeros((size, size), dtype=int)
    for predicted, label in zip(predictions, labels, strict=True):
        if predicted is not None:
            matrix[label + 1, min(predicted + 1, size - 1)] += 1
    return matrix
