"""Fixed-length segmenter (docs/method.md §2.3): a cut every L tokens, optionally snapped to the nearest
word-initial token within +-w tokens so that words are not split. With a target ``k``, L = ceil(T / k)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rredcot_viz.segmenters.base import (
    MAX_K,
    Segmenter,
    SegmenterConfig,
    SegmenterInput,
    is_word_initial,
    k_setting,
    segmenters,
)
from rredcot_viz.settings import setting


@dataclass(frozen=True)
class FixedTokensSegmenterConfig(SegmenterConfig):
    k: int | None = k_setting(None, "L = ceil(T / K) (none: L = length)")
    length: int = setting(128, "segment length L in tokens when K is not set", low=1)
    snap_window: int = setting(8, "move each cut to a word start within this many tokens (0: exactly every L)", low=0)


@segmenters.register("fixed_tokens", aliases=("fixed",))
class FixedTokensSegmenter(Segmenter):
    name = "fixed_tokens"
    targets_count = True
    Config = FixedTokensSegmenterConfig

    @classmethod
    def k_reach(cls, inp: SegmenterInput) -> int | None:
        """The non-blank pieces of a cut before every token (with no K it cuts every ``length`` tokens, fewer)."""
        return len(cls(k=min(inp.n_tokens, MAX_K)).candidate_cuts(inp)) + 1

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        length = math.ceil(inp.n_tokens / self.config.k) if self.config.k else self.config.length
        cuts = []
        for cut in range(length, inp.n_tokens, length):
            cuts.append(self._snap(inp, cut) if self.config.snap_window else cut)
        return cuts, ["fixed"] * len(cuts), {}

    def _snap(self, inp: SegmenterInput, cut: int) -> int:
        window = self.config.snap_window
        for distance in range(window + 1):
            for candidate in (cut - distance, cut + distance):
                if 0 < candidate < inp.n_tokens and is_word_initial(inp, candidate):
                    return candidate
        return cut
