"""The one scoring plan shared by the analyzer and the trainer (docs/method.md §2-§4).

Both turn a response into the same things with the same code:

- ``ResponseTokens``: the response's token ids and the character offset where each token starts, either
  re-tokenised from text (the analyzer) or taken from the sampled ids (the trainer, which must train on
  exactly the tokens it sampled);
- the segmented region (``reasoning`` scope: up to the sentence that states the answer) and the
  ``SegmenterInput`` every segmenter reads, with real per-token entropies. A cut at a character offset goes
  before the token that contains that offset (``SegmenterInput.char_to_token_cut``), so each token
  belongs to the segment that contains its first character;
- ``plan_items``: what the estimator needs scored after each state prefix (a target may depend on the state,
  e.g. v-hat's remaining reference path), as ``ScoreItem``s the prefix-reuse scorer packs into one call;
- the estimator's own arithmetic (``combine``) from those log-probs to state values.

So the same rollout analysed in the app and credited in the trainer gets the same sigma (tested).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.segmenters.base import SegmenterInput
from rredcot_viz.segmenters.scope import Scope, reasoning_end
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import ScoreItem, ScoreSeries, content_key


@dataclass(frozen=True)
class ResponseTokens:
    """A response's text, token ids and each token's start offset in the text (``starts[0] == 0``)."""

    text: str
    ids: tuple[int, ...]
    starts: tuple[int, ...]

    @classmethod
    def from_text(cls, lm: LanguageModel, text: str) -> ResponseTokens:
        encoding = lm.encode_with_offsets(text)
        return cls(text, tuple(encoding.ids), tuple(encoding.starts))

    @classmethod
    def from_ids(cls, lm: LanguageModel, ids: list[int] | tuple[int, ...]) -> ResponseTokens:
        """Sampled ids as they are (never re-tokenised): each token's start is the length of the decoded prefix
        before it (``token_starts``)."""
        ids = tuple(ids)
        return cls(lm.decode(list(ids)), ids, tuple(token_starts(lm.decode, ids)))

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    def region_tokens(self, scope: Scope) -> int:
        """Number of tokens in the segmented region: those that start before its end offset (at least 1)."""
        end = reasoning_end(self.text, scope)
        if end >= len(self.text):
            return self.n_tokens
        return max(bisect.bisect_right(self.starts, end) - 1, 1)

    def prefix_text(self, tokens: int) -> str:
        """The text of the first ``tokens`` tokens (a state's reasoning so far)."""
        return self.text if tokens >= self.n_tokens else self.text[: self.starts[tokens]]

    def region_text(self, scope: Scope) -> str:
        return self.prefix_text(self.region_tokens(scope))

    def segmenter_input(
        self,
        scope: Scope,
        entropies: np.ndarray | None,
        step_spans: tuple[tuple[int, int], ...] | None = None,
    ) -> SegmenterInput:
        """The region as every segmenter sees it; ``entropies=None`` gives zeros (text-only candidate cuts)."""
        tokens = self.region_tokens(scope)
        values = np.zeros(tokens) if entropies is None else np.asarray(entropies, dtype=float)[:tokens]
        return SegmenterInput(self.region_text(scope), self.starts[:tokens], values, step_spans)


def token_starts(decode: Callable[[list[int]], str], ids: tuple[int, ...], block: int = 64) -> list[int]:
    """``len(decode(ids[:i]))`` for every i, decoding about ``block`` tokens per token instead of i (a 4,096-token
    rollout took 5 s): prefixes are decoded from the last cut where decoding splits cleanly, i.e. the decoded
    text up to the cut ends in whole characters and is unchanged by what follows (checked on the tokens either
    side: UTF-8 and a decoder's space clean-up act within a few bytes). Where no cut is clean (a decoder that
    strips a first token's space), it decodes whole prefixes, as exact as before."""
    starts: list[int] = []
    cut, base = 0, 0  # base == len(decode(ids[:cut]))
    for i in range(len(ids)):
        if i - cut >= block and _splits_cleanly(decode, ids, i):
            base += len(decode(list(ids[cut:i])))
            cut = i
        starts.append(base + len(decode(list(ids[cut:i]))))
    return starts


def _splits_cleanly(decode: Callable[[list[int]], str], ids: tuple[int, ...], at: int, window: int = 6) -> bool:
    before, after = list(ids[max(at - window, 0) : at]), list(ids[at : at + window])
    left = decode(before)
    return not left.endswith("\ufffd") and left + decode(after) == decode(before + after)


@dataclass(frozen=True)
class ScoringSubject:
    """What an estimator reads to decide what to score: the trace (question, references, outcome) and its
    response tokens. ``TraceContext`` is one; the trainer builds one per rollout."""

    trace: Trace
    response: ResponseTokens

    def region_text(self, scope: Scope) -> str:
        return self.response.region_text(scope)


class TargetPlanner(Protocol):
    """What the plan asks of an estimator: the target of a per-state series after a prefix (estimators
    implement it; the scoring layer needs nothing else of them)."""

    def state_target(self, series: ScoreSeries, subject: ScoringSubject, prefix: int) -> str: ...


def item_key(context: str, target: str) -> str:
    return content_key(context, target)


def plan_items(
    estimator: TargetPlanner | None,
    subject: ScoringSubject,
    series: list[ScoreSeries],
    prefixes: list[int],
    encode: Callable[[str], tuple[int, ...]],
) -> dict[str, list[ScoreItem]]:
    """Per series name, one item per prefix (in the order given). A per-state series asks the estimator for
    its target after each prefix (``state_target``); ``encode`` maps text to token ids (memoised by callers)."""
    plan: dict[str, list[ScoreItem]] = {}
    for s in series:
        items = []
        if s.per_state and estimator is None:
            raise ValueError(f"series {s.name!r} has a target per state: pass the estimator that names it")
        for prefix in prefixes:
            target = estimator.state_target(s, subject, prefix) if s.per_state else s.target  # type: ignore[union-attr]
            items.append(ScoreItem(item_key(s.context, target), prefix, encode(s.context), encode(target)))
        plan[s.name] = items
    return plan
