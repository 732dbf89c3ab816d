"""Segmenter inputs the segmenter tests build by hand."""

from __future__ import annotations

import numpy as np

from rredcot_viz.segmenters import SegmenterInput


def char_input(text: str, entropies=None, step_spans=None) -> SegmenterInput:
    """One token per character (offsets are exact), with given or flat entropies."""
    h = np.ones(len(text)) if entropies is None else np.asarray(entropies, dtype=float)
    return SegmenterInput(text, tuple(range(len(text))), h, step_spans)
