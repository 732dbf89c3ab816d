"""The hybrid segmenter (segmenters/hybrid.py): merge order by score, ties to the left, replayable
history, and k clamped with a warning."""

from __future__ import annotations

import numpy as np

from rredcot_viz.segmenters import segmenters
from rredcot_viz.segmenters.hybrid import merge_pieces

from .inputs import char_input


def test_hybrid_merge_order_sum_score():
    """Pieces [0,2) [2,4) [4,6) [6,8) with entropy sums 1, 5, 1, 1: pair sums 6, 6, 2 -> merge pieces 2+3
    first; then sums 6, 7 -> merge 0+1 (leftmost minimum)."""
    entropies = np.array([0.5, 0.5, 2.5, 2.5, 0.5, 0.5, 0.5, 0.5])
    cuts, history = merge_pieces([0, 2, 4, 6, 8], entropies, 2, "sum")
    assert cuts == [4]
    assert [(m.left, m.score) for m in history] == [(2, 2.0), (0, 6.0)]
    assert [m.cuts_after for m in history] == [(2, 4), (4,)]


def test_hybrid_merge_order_boundary_score_keeps_high_entropy_boundaries():
    """Boundary score = entropy of the right piece's first token: the K-1 highest boundaries survive."""
    entropies = np.array([0, 0, 3.0, 0, 1.0, 0, 2.0, 0, 0.5, 0])
    cuts, history = merge_pieces([0, 2, 4, 6, 8, 10], entropies, 3, "boundary")
    assert cuts == [2, 6]  # boundaries with entropy 3.0 and 2.0
    assert [m.score for m in history] == [0.5, 1.0]


def test_hybrid_ties_go_left_and_history_replays():
    """Four pieces of sum 2: pair sums 4, 4, 4 -> merge the leftmost; then 6, 4 -> merge pieces 1+2."""
    inp = char_input("a\nb\nc\nd\n", np.ones(8))
    segmentation = segmenters.get("hybrid")(k=2).segment(inp)
    assert segmentation.initial_cuts == (2, 4, 6)
    assert [(m.left, m.score) for m in segmentation.merge_history] == [(0, 4.0), (1, 4.0)]
    assert segmentation.cuts == (4,) and segmentation.merge_history[-1].cuts_after == segmentation.cuts


def test_k_larger_than_candidates_is_clamped_with_a_warning():
    segmentation = segmenters.get("hybrid")(k=10).segment(char_input("a\nb\nc"))
    assert segmentation.k == 3
    assert "k=10 asks for more segments than the 3 keyword/newline pieces allow" in segmentation.warnings[0]
