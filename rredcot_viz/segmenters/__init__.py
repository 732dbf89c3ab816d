"""Segmenters, one file each, registered by name in ``segmenters`` (docs/method.md §2)."""

# Each import registers segmenters; the order is the order the CLI and the app list them in.
from rredcot_viz.segmenters import hybrid, keyword, lines, sentence  # noqa: F401, I001
from rredcot_viz.segmenters import fixed, words, adaptive, delimiter, given  # noqa: F401
from rredcot_viz.segmenters.base import (
    DEFAULT_SEGMENTER,
    MergeStep,
    Segment,
    Segmentation,
    Segmenter,
    SegmenterConfig,
    SegmenterInput,
    delimiter_segmenter,
    exact_count_segmenter,
    segmenter_takes_count,
    segmenters,
    starting_segmenter,
    steps_segmenter,
    text_segmenters,
)
from rredcot_viz.segmenters.scope import reasoning_end

__all__ = [
    "DEFAULT_SEGMENTER",
    "MergeStep",
    "Segment",
    "Segmentation",
    "Segmenter",
    "SegmenterConfig",
    "SegmenterInput",
    "delimiter_segmenter",
    "exact_count_segmenter",
    "reasoning_end",
    "segmenter_takes_count",
    "segmenters",
    "starting_segmenter",
    "steps_segmenter",
    "text_segmenters",
]
