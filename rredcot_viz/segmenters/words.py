"""Word-start segmenter: K pieces of about equal token length whose every cut is a distinct word start.

``fixed_tokens`` (L = ceil(T / K), each cut snapped to a nearby word start) can return fewer than K pieces on a
short text: ceil rounds L up, and two cuts can snap to the same word start. This segmenter places the K - 1 cuts
at distinct word starts nearest to i * T / K, so a text of at least K words always gets K pieces, and a shorter
one gets one piece per word. The trainer cuts a short failed parent with it (a reset lands between its pieces),
where ``fixed_tokens`` left answer-only parents with fewer steps, and so more resets from the empty prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rredcot_viz.segmenters.base import (
    Segmenter,
    SegmenterConfig,
    SegmenterInput,
    is_word_initial,
    k_setting,
    segmenters,
)


@dataclass(frozen=True)
class WordStartsSegmenterConfig(SegmenterConfig):
    k: int | None = k_setting(None, "cuts at the K - 1 word starts nearest to equal token lengths (none: every word)")


def word_starts(inp: SegmenterInput) -> list[int]:
    """Token indices (after the first) that begin a word with visible text: a cut before a whitespace-only
    token would leave a blank piece, which ``clean_cuts`` merges away."""
    return [j for j in range(1, inp.n_tokens) if is_word_initial(inp, j) and inp.token_text(j).strip()]


@segmenters.register("word_starts", aliases=("words",))
class WordStartsSegmenter(Segmenter):
    name = "word_starts"
    targets_count = True
    exact_count = True
    Config = WordStartsSegmenterConfig

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        starts = word_starts(inp)
        k = self.config.k
        if k is None or k - 1 >= len(starts):
            return starts, ["word"] * len(starts), {}
        cuts: list[int] = []
        lowest = 0  # index into ``starts`` of the first start still free
        for i in range(1, k):
            highest = len(starts) - (k - i)  # leave one start for each cut after this one
            target = i * inp.n_tokens / k
            chosen = min(range(lowest, highest + 1), key=lambda j: (abs(starts[j] - target), j))
            cuts.append(starts[chosen])
            lowest = chosen + 1
        return cuts, ["word"] * len(cuts), {}
