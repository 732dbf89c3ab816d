"""Attributions over segments, registered by name in ``attributions`` (docs/method.md §7), and agreement."""

from rredcot_viz.attribution import attention, gradient, loo, shapley  # noqa: F401  (registers them)
from rredcot_viz.attribution.base import Attribution, AttributionConfig, SegmentScores, attributions

__all__ = ["Attribution", "AttributionConfig", "SegmentScores", "attributions"]
