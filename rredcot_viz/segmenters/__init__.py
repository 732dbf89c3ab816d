"""Segmenters, one file each, registered by name in ``segmenters`` (docs/method.md §2)."""

# Each import registers segmenters; the order is the order the CLI and the app list them in.
from rredcot_viz.segmenters import hybrid, keyword, lines, sentence  # noqa: F401, I001
from rredcot_viz.segmenters import fixed, words, adaptive, delimiter, given  # noqa: F401
from rredcot_viz.segmenters.base import (
    MergeStep,
    Segment,
    Segmentation,
    Segmenter,
    SegmenterConfig,
    SegmenterInput,
    segmenter_takes_count,
    segmenters,
    text_segmenters,
)
from rredcot_viz.segmenters.scope import reasoning_end

__all__ = [
    "MergeStep",
    "Segment",
    "Segmentation",
    "Segmenter",
    "SegmenterConfig",
    "SegmenterInput",
    "reasoning_end",
    "segmenter_takes_count",
    "segmenters",
    "text_segmenters",
]
