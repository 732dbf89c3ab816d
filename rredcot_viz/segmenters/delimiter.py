"""Explicit-delimiter segmenter (docs/method.md §2.3): cut after a delimiter string such as ``</thought>``
(RRPO/SRPO thought mode) or `` ки`` (Math-Shepherd), or before each match of a regex such as
``^Step \\d+:``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rredcot_viz.errors import ConfigError
from rredcot_viz.segmenters.base import Segmenter, SegmenterConfig, SegmenterInput, regex_cuts, segmenters
from rredcot_viz.settings import setting


@dataclass(frozen=True)
class DelimiterSegmenterConfig(SegmenterConfig):
    delimiter: str = setting("</thought>", "cut after this text (\\n = newline), or before each match with regex")
    regex: bool = setting(False, "read the delimiter as a (multiline) regex and cut before each match")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.delimiter:
            raise ConfigError("the delimiter segmenter needs a non-empty delimiter")
        if self.regex:
            try:
                re.compile(self.delimiter)
            except re.error as error:
                raise ConfigError(f"delimiter regex {self.delimiter!r} does not compile: {error}") from None


@segmenters.register("delimiter")
class DelimiterSegmenter(Segmenter):
    name = "delimiter"
    cuts_at_delimiter = True
    Config = DelimiterSegmenterConfig
    provenance = "RRPO/SRPO thought delimiter (arXiv 2605.25507); Math-Shepherd step tag"

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        if self.config.regex:
            pattern = re.compile(self.config.delimiter, flags=re.MULTILINE)
            cuts, kinds = regex_cuts(inp, pattern, "delimiter", after=False)
        else:
            cuts, kinds = regex_cuts(inp, re.compile(re.escape(self.config.delimiter)), "delimiter", after=True)
        warnings = [] if cuts else [f"delimiter {self.config.delimiter!r} does not occur: one segment"]
        return cuts, kinds, {"warnings": warnings}
