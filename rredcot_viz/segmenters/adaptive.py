"""Adaptive entropy segmenter (docs/method.md §2.3 ``adaptive_entropy``; inspired by TreeRL, arXiv 2506.11902).

Finer where the model is uncertain, coarser where it is confident: cut before tokens whose entropy is a
local maximum and at least mu + kappa * sigma of the trace, at least ``min_tokens`` apart; a segment longer
than ``max_tokens`` is cut at its highest-entropy token. With a target ``k``, the k-1 highest-entropy
admissible cuts are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from rredcot_viz.errors import ConfigError
from rredcot_viz.segmenters.base import (
    Segmenter,
    SegmenterConfig,
    SegmenterInput,
    clamp_warning,
    is_word_initial,
    k_setting,
    segmenters,
)
from rredcot_viz.settings import setting


@dataclass(frozen=True)
class AdaptiveEntropySegmenterConfig(SegmenterConfig):
    k: int | None = k_setting(None, "the K-1 highest-entropy admissible cuts are kept (none: every peak)")
    kappa: float = setting(1.5, "cut at entropy peaks of at least mean + kappa std of the trace's entropies")
    min_tokens: int = setting(16, "fewest tokens between two cuts (and from either end)", low=1)
    max_tokens: int = setting(512, "a longer piece is cut at its highest-entropy token (without K)", low=1)
    word_initial_only: bool = setting(True, "cut only before a token that starts a word")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 1 <= self.min_tokens <= self.max_tokens:
            raise ConfigError(f"need 1 <= min_tokens <= max_tokens, got {self.min_tokens}, {self.max_tokens}")


@segmenters.register("adaptive_entropy", aliases=("adaptive",))
class AdaptiveEntropySegmenter(Segmenter):
    name = "adaptive_entropy"
    targets_count = True
    Config = AdaptiveEntropySegmenterConfig
    text_based = False

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        config = self.config
        h = np.asarray(inp.entropies, dtype=float)
        threshold = h.mean() + config.kappa * h.std()
        peaks = [
            j
            for j in range(1, inp.n_tokens)
            if h[j] >= threshold
            and h[j] >= h[j - 1]
            and (j + 1 == inp.n_tokens or h[j] >= h[j + 1])
            and (not config.word_initial_only or is_word_initial(inp, j))
        ]
        # greedy by entropy, keeping cuts min_tokens apart from each other and from both ends
        chosen: list[int] = []
        for j in sorted(peaks, key=lambda j: (-h[j], j)):
            inside = config.min_tokens <= j <= inp.n_tokens - config.min_tokens
            if inside and all(abs(j - c) >= config.min_tokens for c in chosen):
                chosen.append(j)
        warnings = []
        if config.k is not None:
            if len(chosen) + 1 < config.k:
                warnings.append(clamp_warning(config.k, len(chosen) + 1, "admissible entropy peaks"))
            chosen = chosen[: config.k - 1]
        else:
            chosen = self._split_long(h, sorted(chosen), inp.n_tokens)
        return sorted(chosen), ["entropy"] * len(chosen), {"warnings": warnings}

    def _split_long(self, h: np.ndarray, cuts: list[int], n: int) -> list[int]:
        bounds = [0, *cuts, n]
        result = list(cuts)
        for start, end in pairwise(bounds):
            while end - start > self.config.max_tokens:
                lo, hi = (
                    start + self.config.min_tokens,
                    min(end - self.config.min_tokens, start + self.config.max_tokens),
                )
                split = lo + int(np.argmax(h[lo:hi])) if hi > lo else start + self.config.max_tokens
                result.append(split)
                start = split
        return result
