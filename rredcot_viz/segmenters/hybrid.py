"""Hybrid keyword-entropy segmenter, RREDCoT's default (docs/method.md §2.2 [paper]).

Start from the keyword/newline pieces, then repeatedly merge the adjacent pair with the lowest merge score
(ties: leftmost) until K pieces remain. Merge scores (design choice, configurable):

- ``sum`` (default): the summed token entropy of the two pieces, so short confident pieces go first;
- ``boundary``: the entropy of the first token of the right piece, so the K-1 keyword boundaries with
  the highest entropy (the likeliest decision points) survive.

Every merge is recorded so the app can replay the segmentation step by step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rredcot_viz.errors import ConfigError
from rredcot_viz.segmenters.base import (
    MergeStep,
    Segmentation,
    Segmenter,
    SegmenterInput,
    build_segmentation,
    clamp_warning,
    clean_cuts,
    k_setting,
    segmenters,
)
from rredcot_viz.segmenters.keyword import KeywordSegmenterConfig, keyword_cuts
from rredcot_viz.settings import setting


@dataclass(frozen=True)
class HybridSegmenterConfig(KeywordSegmenterConfig):
    k: int | None = k_setting(12, "the keyword/newline pieces are merged down to K (none: no merging)")
    merge_score: Literal["sum", "boundary"] = setting(
        "sum",
        "the pair merged first: lowest summed entropy (sum), or lowest-entropy boundary (boundary: the K-1 "
        "highest-entropy boundaries survive)",
    )


def merge_pieces(bounds: list[int], entropies: np.ndarray, k: int, score: str) -> tuple[list[int], list[MergeStep]]:
    """Merge adjacent pieces given by ``bounds`` (0, cuts..., T) down to ``k`` pieces; returns the
    remaining internal cuts and the merge history."""
    prefix = np.concatenate([[0.0], np.cumsum(entropies, dtype=float)])
    bounds = list(bounds)
    history: list[MergeStep] = []

    def pair_score(left: int) -> float:  # pieces left and left+1 = [bounds[left], bounds[left+2])
        if score == "sum":
            return float(prefix[bounds[left + 2]] - prefix[bounds[left]])
        return float(entropies[bounds[left + 1]])

    scores = [pair_score(i) for i in range(len(bounds) - 2)]
    while len(bounds) - 1 > k:
        left = int(np.argmin(scores))  # argmin takes the first minimum: ties go to the leftmost pair
        best = scores[left]
        del bounds[left + 1]
        del scores[left]
        # pieces left-1 and left+1 now neighbour the merged piece: recompute their pair scores
        for neighbour in (left - 1, left):
            if 0 <= neighbour < len(scores):
                scores[neighbour] = pair_score(neighbour)
        history.append(MergeStep(len(history) + 1, left, best, tuple(bounds[1:-1])))
    return bounds[1:-1], history


@segmenters.register("hybrid")
class HybridSegmenter(Segmenter):
    """Keyword/newline pieces merged by lowest combined entropy down to K segments."""

    name = "hybrid"
    targets_count = True
    replays_merges = True
    Config = HybridSegmenterConfig
    provenance = "paper (arXiv 2606.06475); merge scores, keywords and K=12 are design choices"

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        raw, raw_kinds = keyword_cuts(inp, self.config)
        cuts, kinds = clean_cuts(inp, raw, raw_kinds)
        kind_of = dict(zip(cuts, kinds, strict=True))
        warnings = []
        k = self.config.k
        if k is None or len(cuts) + 1 <= k:
            if k is not None and len(cuts) + 1 < k:
                warnings.append(clamp_warning(k, len(cuts) + 1, "keyword/newline pieces"))
            return cuts, kinds, {"initial_cuts": cuts, "warnings": warnings}
        merged, history = merge_pieces([0, *cuts, inp.n_tokens], inp.entropies, k, self.config.merge_score)
        extras = {"initial_cuts": cuts, "merge_history": history, "warnings": warnings}
        return merged, [kind_of[c] for c in merged], extras

    def replay(self, segmentation: Segmentation, inp: SegmenterInput, step: int) -> Segmentation:
        return replay(segmentation, inp, step)


def replay(segmentation: Segmentation, inp: SegmenterInput, step: int) -> Segmentation:
    """The hybrid segmentation as it was after ``step`` merges (0 = the keyword pieces), for the UI stepper."""
    if not 0 <= step <= len(segmentation.merge_history):
        raise ConfigError(f"merge step must be in 0..{len(segmentation.merge_history)}, got {step}")
    cuts = list(segmentation.initial_cuts if step == 0 else segmentation.merge_history[step - 1].cuts_after)
    kind = dict(zip(segmentation.cuts, (s.boundary_kind for s in segmentation.segments[1:]), strict=True))
    return build_segmentation("hybrid", inp, cuts, [kind.get(c, "keyword") for c in cuts])
