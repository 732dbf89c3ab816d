"""Keyword / newline split (docs/method.md §2.1 [paper]): the candidate pieces the hybrid segmenter merges.

Cuts go after newline runs and *before* discourse markers at the start of a line or sentence, so a marker
opens the new segment. The paper's keyword list is not public; the default list is a design choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rredcot_viz.errors import ConfigError
from rredcot_viz.segmenters.base import Segmenter, SegmenterConfig, SegmenterInput, segmenters
from rredcot_viz.settings import setting

DEFAULT_KEYWORDS = ("Wait", "But", "Alternatively", "Hmm", "Let me", "So", "Therefore", "Now", "Next")


@dataclass(frozen=True)
class KeywordSegmenterConfig(SegmenterConfig):
    keywords: tuple[str, ...] = setting(DEFAULT_KEYWORDS, "discourse markers that open a segment at a line or "
                                        "sentence start (comma-separated)")  # fmt: skip
    newlines: bool = setting(True, "also cut after every run of newlines")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.keywords and not self.newlines:
            raise ConfigError("the keyword segmenter needs keywords or newlines to cut at")


def keyword_cuts(inp: SegmenterInput, config: KeywordSegmenterConfig) -> tuple[list[int], list[str]]:
    cuts: list[int] = []
    kinds: list[str] = []
    if config.newlines:
        for match in re.finditer(r"\n+", inp.text):
            cuts.append(inp.char_to_token_cut(match.end()))
            kinds.append("newline")
    if config.keywords:
        alternatives = "|".join(re.escape(k) for k in sorted(config.keywords, key=len, reverse=True))
        # a marker at the start of the text, of a line, or of a sentence (after . ! ? and spaces)
        pattern = re.compile(rf"(?:(?<=\n)|(?<=[.!?])\s+|(?<=[.!?]\"\s)|^)[ \t]*(?=(?:{alternatives})\b)")
        for match in pattern.finditer(inp.text):
            offset = match.end()
            if offset > 0:
                cuts.append(inp.char_to_token_cut(offset))
                kinds.append("keyword")
    return cuts, kinds


@segmenters.register("keyword")
class KeywordSegmenter(Segmenter):
    """Cut at every newline and before every discourse marker; no target count."""

    name = "keyword"
    scored_up_front = True
    Config = KeywordSegmenterConfig
    provenance = "paper (arXiv 2606.06475); keyword list is a design choice"

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        cuts, kinds = keyword_cuts(inp, self.config)
        return cuts, kinds, {}
