"""Sentence segmenter: the Thought Anchors chunker (``utils.split_solution_into_chunks``), kept lossless.

Cut after ``.``, ``?`` or ``!`` followed by whitespace, and at blank lines; pieces shorter than
``min_chars`` merge into the next piece (the last into the previous one). Unlike the original, a trailing
piece without terminal punctuation is kept, so the split reproduces the text exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rredcot_viz.segmenters.base import Segmenter, SegmenterConfig, SegmenterInput, segmenters
from rredcot_viz.settings import setting

_SENTENCE_END = re.compile(r"[.?!](?=\s)\s*|\n\s*\n\s*|\r\n\r\n\s*")


@dataclass(frozen=True)
class SentenceSegmenterConfig(SegmenterConfig):
    min_chars: int = setting(10, "a piece shorter than this many characters merges into the next one", low=0)


@segmenters.register("sentence")
class SentenceSegmenter(Segmenter):
    name = "sentence"
    scored_up_front = True
    Config = SentenceSegmenterConfig
    provenance = "Thought Anchors chunker (arXiv 2506.19143), made lossless"

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        offsets = [m.end() for m in _SENTENCE_END.finditer(inp.text) if 0 < m.end() < len(inp.text)]
        kept: list[int] = []
        previous = 0
        for offset in offsets:
            if offset - previous >= self.config.min_chars:
                kept.append(offset)
                previous = offset
        if kept and len(inp.text) - kept[-1] < self.config.min_chars:
            kept.pop()  # a short last piece merges into the previous one
        cuts = [inp.char_to_token_cut(offset) for offset in kept]
        return cuts, ["sentence"] * len(cuts), {}
