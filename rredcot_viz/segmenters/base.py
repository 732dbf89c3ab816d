"""The segmenter interface and the data it produces.

A segmenter cuts the reasoning part of a response into segments c_1..c_K (docs/method.md §2). Every segmenter
returns segments that tile the reasoning text exactly: non-empty, in order, no gaps or overlaps, cut only at
token boundaries. It works on token indices; character spans follow from the tokens' start offsets.

Cuts are token indices ``0 < c < T`` into the segmented region: segment t covers tokens
``[cuts[t-2], cuts[t-1])`` with ``cuts[-1] = 0`` and ``cuts[K-1] = T`` implied. State s_t is the prompt plus
the tokens before segment t, so the states' prefix lengths are ``[0, *cuts, T]``.
"""

from __future__ import annotations

import bisect
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np

from rredcot_viz.errors import ConfigError
from rredcot_viz.registry import Registry
from rredcot_viz.settings import Settings, setting, with_overrides


@dataclass(frozen=True)
class SegmenterInput:
    """What a segmenter sees: the region's text, each token's start offset, and per-token entropies."""

    text: str
    starts: tuple[int, ...]  # character offset of each token, starts[0] == 0, non-decreasing
    entropies: np.ndarray  # (T,) nats, entropy of the distribution each token was drawn from
    step_spans: tuple[tuple[int, int], ...] | None = None  # pre-split steps as character spans, if any

    def __post_init__(self) -> None:
        if len(self.starts) != len(self.entropies):
            raise ValueError(f"{len(self.starts)} token starts but {len(self.entropies)} entropies")
        if not self.starts:
            raise ValueError("cannot segment an empty region (no tokens)")

    @property
    def n_tokens(self) -> int:
        return len(self.starts)

    def token_text(self, index: int) -> str:
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[index] : end]

    def char_to_token_cut(self, offset: int) -> int:
        """The token cut for a character offset: before the token that starts at or contains it (§2.1 rule 3);
        the end of the text is after the last token (not before it)."""
        if offset >= len(self.text):
            return self.n_tokens
        return max(bisect.bisect_right(self.starts, offset) - 1, 0)

    def char_span(self, token_start: int, token_end: int) -> tuple[int, int]:
        end = self.starts[token_end] if token_end < self.n_tokens else len(self.text)
        return (0 if token_start == 0 else self.starts[token_start]), end


@dataclass(frozen=True)
class Segment:
    index: int  # 0-based: segment t = index + 1
    text: str
    char_span: tuple[int, int]
    token_span: tuple[int, int]
    boundary_kind: str  # how this segment's start was chosen: start, keyword, newline, sentence, entropy, ...
    entropy_sum: float
    entropy_mean: float
    entropy_max: float
    entropy_first: float

    @property
    def n_tokens(self) -> int:
        return self.token_span[1] - self.token_span[0]


@dataclass(frozen=True)
class MergeStep:
    """One merge of the hybrid segmenter: pieces ``left`` and ``left + 1`` became one, at this score."""

    step: int
    left: int
    score: float
    cuts_after: tuple[int, ...]


@dataclass
class Segmentation:
    strategy: str
    cuts: tuple[int, ...]  # internal cut token indices, strictly increasing, in (0, T)
    segments: list[Segment]
    warnings: list[str] = field(default_factory=list)
    merge_history: list[MergeStep] = field(default_factory=list)
    initial_cuts: tuple[int, ...] = ()  # the hybrid segmenter's keyword cuts before merging

    @property
    def k(self) -> int:
        return len(self.segments)

    @property
    def state_prefixes(self) -> tuple[int, ...]:
        """Token prefix length of each state s_1..s_{K+1} (0 = prompt only)."""
        return (0, *self.cuts, self.segments[-1].token_span[1])


MAX_K = 256


def k_setting(default: int | None, help: str) -> Any:
    """The ``k`` field of a segmenter that cuts to a target count, so its forms and options show K."""
    return setting(
        default, f"target number of segments K (2-64 recommended, docs/method.md §2); {help}", low=1, high=MAX_K
    )


@dataclass(frozen=True)
class SegmenterConfig(Settings):
    """Base of every segmenter's config. Every segmenter accepts ``k`` (the trainer hands one to whichever
    segmenter it is given), but only those that cut to a count declare it a setting (``k_setting``)."""

    k: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.k is not None and not 1 <= self.k <= MAX_K:  # also for a segmenter whose k is not a setting
            raise ConfigError(f"k must be between 1 and {MAX_K} (2-64 recommended, docs/method.md §2), got {self.k}")


class Segmenter(ABC):
    """Cuts a region into segments. Subclasses set ``name``, ``Config``, ``provenance`` and declare their
    capabilities (``text_based``, ``targets_count``, ``needs``, ``follows_steps``, ``scored_up_front``,
    ``replays_merges``, ``cuts_at_delimiter``, ``exact_count``), which the pickers, the analyzer and the trainer
    select by (``segmenters.having(targets_count=True)``), never by name."""

    name: ClassVar[str]
    Config: ClassVar[type[SegmenterConfig]] = SegmenterConfig
    provenance: ClassVar[str] = "design choice (configurable)"
    text_based: ClassVar[bool] = True  # candidate cuts depend on the text only, so they can be scored up front
    targets_count: ClassVar[bool] = False  # cuts to a target count K (its config's ``k`` is a ``k_setting``)
    needs: ClassVar[tuple[str, ...]] = ()  # what it needs of a trace: ``traces.needs.NEED_TEXT`` names
    follows_steps: ClassVar[bool] = False  # its segments are the trace's own steps (their labels line up)
    scored_up_front: ClassVar[bool] = False  # its default cuts are among those the analyzer's first call scores
    replays_merges: ClassVar[bool] = False  # records merges that ``replay`` steps through (the Inspect stepper)
    cuts_at_delimiter: ClassVar[bool] = False  # its config's ``delimiter`` is where it cuts (a thought's end)
    exact_count: ClassVar[bool] = False  # any text of at least K words gets exactly K pieces (a short reset parent)

    def __init__(self, config: SegmenterConfig | None = None, **overrides: Any):
        base = config or self.Config()
        if not isinstance(base, self.Config):
            raise ConfigError(f"{self.name} needs a {self.Config.__name__}, got {type(base).__name__}")
        self.config = with_overrides(base, f"segmenter {self.name!r}", overrides)

    @abstractmethod
    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        """Internal cuts (any order, may contain 0/T/duplicates), their boundary kinds, and extras
        (``warnings``, ``merge_history``, ``initial_cuts``)."""

    def candidate_cuts(self, inp: SegmenterInput) -> list[int]:
        """Every cut this segmenter could use for any ``k``: what the all-boundary cache precomputes."""
        cuts, kinds, extras = self.propose(inp)
        if "initial_cuts" in extras:
            return list(extras["initial_cuts"])
        return clean_cuts(inp, cuts, kinds)[0]

    def segment(self, inp: SegmenterInput) -> Segmentation:
        cuts, kinds, extras = self.propose(inp)
        cuts, kinds = clean_cuts(inp, cuts, kinds)
        return build_segmentation(self.name, inp, cuts, kinds, extras)

    @classmethod
    def k_reach(cls, inp: SegmenterInput) -> int | None:
        """The largest K this segmenter can cut ``inp`` into (None: it takes no K), so a K picker is bounded by
        the chosen segmenter's own pieces: by default, the pieces it cuts with no K."""
        if not cls.targets_count:
            return None
        return len(cls(k=None).candidate_cuts(inp)) + 1

    def replay(self, segmentation: Segmentation, inp: SegmenterInput, step: int) -> Segmentation:
        """``segmentation`` as it was after ``step`` of its recorded merges (segmenters that ``replays_merges``)."""
        raise NotImplementedError(f"segmenter {self.name!r} records no merges to replay")


segmenters: Registry[type[Segmenter]] = Registry("segmenter")
DEFAULT_SEGMENTER = "hybrid"  # what every face and the trainer start on (RREDCoT's own, docs/method.md §2.2)


def segmenter_takes_count(name: str) -> bool:
    """Whether segmenter ``name`` cuts to a target count K, so a caller with a K (the trainer) hands it over."""
    return segmenters.get(name).targets_count


def steps_segmenter() -> Segmenter:
    """The segmenter whose segments are the trace's own steps (``follows_steps``), so step labels line up."""
    return segmenters.get(segmenters.having(follows_steps=True)[0])()


def starting_segmenter(has_steps: bool) -> str:
    """The segmenter a page opens on: the trace's own steps when it has them (labels line up), else the default."""
    return segmenters.having(follows_steps=True)[0] if has_steps else DEFAULT_SEGMENTER


def delimiter_segmenter(delimiter: str) -> Segmenter:
    """The segmenter that cuts after ``delimiter`` (``cuts_at_delimiter``): a completion's thoughts."""
    return segmenters.get(segmenters.having(cuts_at_delimiter=True)[0])(delimiter=delimiter)


def exact_count_segmenter(k: int) -> Segmenter:
    """A segmenter that cuts any text of at least ``k`` words into exactly ``k`` pieces (``exact_count``)."""
    return segmenters.get(segmenters.having(exact_count=True)[0])(k=k)


def text_segmenters() -> list[str]:
    """Segmenters that need nothing of a trace but its text (the trainer's rollouts have no steps)."""
    return [name for name in segmenters.names() if not segmenters.get(name).needs]


def clean_cuts(inp: SegmenterInput, cuts: list[int], kinds: list[str]) -> tuple[list[int], list[str]]:
    """Sorted unique cuts strictly inside the region, with empty or whitespace-only pieces merged into the
    following piece (into the previous one at the end), docs/method.md §2.1 rule 4."""
    kind_of: dict[int, str] = {}
    for cut, kind in zip(cuts, kinds, strict=True):
        if 0 < cut < inp.n_tokens:
            kind_of.setdefault(cut, kind)
    ordered = sorted(kind_of)
    kept: list[int] = []
    previous = 0
    for cut in ordered:
        start, end = inp.char_span(previous, cut)
        if inp.text[start:end].strip():
            kept.append(cut)
            previous = cut
    # a whitespace-only tail merges into the previous piece
    while kept and not inp.text[inp.char_span(kept[-1], inp.n_tokens)[0] :].strip():
        kept.pop()
    return kept, [kind_of[c] for c in kept]


def build_segmentation(
    strategy: str, inp: SegmenterInput, cuts: list[int], kinds: list[str], extras: dict[str, Any] | None = None
) -> Segmentation:
    extras = extras or {}
    bounds = [0, *cuts, inp.n_tokens]
    segments = []
    for index, (start, end) in enumerate(pairwise(bounds)):
        char_start, char_end = inp.char_span(start, end)
        entropy = np.asarray(inp.entropies[start:end], dtype=float)
        segments.append(
            Segment(
                index=index,
                text=inp.text[char_start:char_end],
                char_span=(char_start, char_end),
                token_span=(start, end),
                boundary_kind="start" if index == 0 else kinds[index - 1],
                entropy_sum=float(entropy.sum()),
                entropy_mean=float(entropy.mean()),
                entropy_max=float(entropy.max()),
                entropy_first=float(entropy[0]),
            )
        )
    return Segmentation(
        strategy=strategy,
        cuts=tuple(cuts),
        segments=segments,
        warnings=list(extras.get("warnings", [])),
        merge_history=list(extras.get("merge_history", [])),
        initial_cuts=tuple(extras.get("initial_cuts", ())),
    )


def regex_cuts(inp: SegmenterInput, pattern: re.Pattern[str], kind: str, after: bool) -> tuple[list[int], list[str]]:
    """Token cuts at every match of ``pattern``: after the match (``after``) or before it."""
    cuts = [inp.char_to_token_cut(m.end() if after else m.start()) for m in pattern.finditer(inp.text)]
    return cuts, [kind] * len(cuts)


def is_word_initial(inp: SegmenterInput, index: int) -> bool:
    """Whether token ``index`` starts a word (so a cut before it does not split one)."""
    text = inp.token_text(index)
    return bool(text) and (text[0].isspace() or not inp.token_text(index - 1)[-1:].isalnum())


def clamp_warning(requested: int, available: int, what: str) -> str:
    return (
        f"k={requested} asks for more segments than the {available} {what} allow; using {available} segments "
        "(lower k, or pick a finer segmenter)"
    )
