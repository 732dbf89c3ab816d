"""The adaptive-entropy segmenter (segmenters/adaptive.py): cuts at entropy peaks, min length apart."""

from __future__ import annotations

import numpy as np

from rredcot_viz.segmenters import SegmenterInput, segmenters


def test_adaptive_cuts_at_entropy_peaks_min_length_apart():
    h = np.zeros(100)
    h[[20, 25, 60]] = [5.0, 4.0, 6.0]
    inp = SegmenterInput("x" * 100, tuple(range(100)), h)
    segmenter = segmenters.get("adaptive")(kappa=1.0, min_tokens=16, word_initial_only=False)
    assert segmenter.segment(inp).cuts == (20, 60)  # 25 is within 16 tokens of the stronger peak 20
    assert segmenters.get("adaptive")(kappa=1.0, word_initial_only=False, k=2).segment(inp).cuts == (60,)
    long = segmenters.get("adaptive")(kappa=10.0, min_tokens=4, max_tokens=30, word_initial_only=False)
    assert all(s.n_tokens <= 30 for s in long.segment(inp).segments)
