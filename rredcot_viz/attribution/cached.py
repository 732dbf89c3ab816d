"""Attribution scores kept in the store: a (trace, model, method, settings, cuts) seen before costs nothing."""

from __future__ import annotations

import json

import numpy as np

from rredcot_viz.attribution.base import Attribution, SegmentScores
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.segmenters.base import Segmentation
from rredcot_viz.settings import config_json
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import content_key


def attribute_cached(
    analyzer: Analyzer,
    trace: Trace,
    segmentation: Segmentation,
    attribution: Attribution,
    progress: ProgressFn | None = None,
) -> SegmentScores:
    """An attribution's scores, from the store when this (trace, model, method, settings, cuts) was seen
    (then with zero cost)."""
    context = analyzer.context(trace)
    key = content_key(
        "attribution",
        context.key,
        attribution.name,
        config_json(attribution.config),
        segmentation.cuts,
        segmentation.state_prefixes[-1],
    )
    stored = context.cache.result(context.key, key)
    if stored is not None:
        stderr = None if stored["stderr"] is None else np.array(stored["stderr"])
        return SegmentScores(attribution.name, np.array(stored["values"]), stderr, stored["checks"], stored["notes"])
    scores = attribution.attribute(context, segmentation, progress)
    payload = {
        "values": scores.values.tolist(),
        "stderr": None if scores.stderr is None else scores.stderr.tolist(),
        "checks": scores.checks,
        "notes": scores.notes,
    }
    settings = json.loads(config_json(attribution.config))
    context.cache.put_result(
        context.key, key, "attribution", attribution.name, settings, payload, scores.cost.as_dict()
    )
    return scores
