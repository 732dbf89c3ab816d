"""What every segmenter shares (segmenters/base.py): it tiles its region exactly, whitespace-only pieces merge
(docs/method.md §2.1 rule 4), and the registry's aliases and choices."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rredcot_viz.segmenters import SegmenterInput, segmenters
from rredcot_viz.segmenters.base import MAX_K
from rredcot_viz.segmenters.words import word_starts

from .inputs import char_input


def word_input(text: str, seed: int = 0) -> SegmenterInput:
    """Tokens like a BPE: each word with its leading space; newlines are tokens of their own."""
    import re

    starts = [m.start() for m in re.finditer(r"\n|[ \t]*[^\s]+|[ \t]+", text)]
    starts[0] = 0
    h = np.random.default_rng(seed).random(len(starts)) * 4
    return SegmenterInput(text, tuple(starts), h)


def assert_tiles(segmentation, inp: SegmenterInput) -> None:
    texts = [segment.text for segment in segmentation.segments]
    assert "".join(texts) == inp.text
    assert all(t.strip() for t in texts) or len(texts) == 1
    spans = [segment.token_span for segment in segmentation.segments]
    assert spans[0][0] == 0 and spans[-1][1] == inp.n_tokens
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in itertools.pairwise(spans))
    for segment in segmentation.segments:  # char spans are the token spans' offsets
        assert segment.char_span[0] == (0 if segment.token_span[0] == 0 else inp.starts[segment.token_span[0]])


TEXT_ALPHABET = st.sampled_from([*list("ab .?!\n"), "Wait", " So", "But ", "\n\n", "Step 1:", "</thought>", "42"])


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(TEXT_ALPHABET, min_size=1, max_size=60),
    name=st.sampled_from(
        [
            "hybrid",
            "keyword",
            "line",
            "paragraph",
            "sentence",
            "fixed_tokens",
            "word_starts",
            "delimiter",
            "adaptive_entropy",
        ]
    ),
    k=st.one_of(st.none(), st.integers(1, 12)),
    seed=st.integers(0, 5),
    words=st.booleans(),
)
def test_every_segmenter_tiles_the_text(pieces, name, k, seed, words):
    text = "".join(pieces)
    if not text.strip():
        text = "x" + text
    inp = word_input(text, seed) if words else char_input(text, np.random.default_rng(seed).random(len(text)))
    segmenter = segmenters.get(name)(k=k) if segmenters.get(name).targets_count else segmenters.get(name)()
    segmentation = segmenter.segment(inp)
    assert_tiles(segmentation, inp)
    if k is not None and name == "hybrid":
        assert segmentation.k <= k
    if name == "word_starts" and text[:1].strip():  # as many pieces as asked for, or one per word
        assert segmentation.k == min(k or MAX_K, len(word_starts(inp)) + 1)
    assert set(segmentation.cuts) <= set(segmenter.candidate_cuts(inp)) or name == "adaptive_entropy"


def test_whitespace_only_pieces_merge_forward():
    """docs/method.md §2.1 rule 4: the lone newline pieces join the following piece; a blank tail the previous."""
    segmentation = segmenters.get("line")().segment(char_input("a\n\n\nb\n \n"))
    assert [s.text for s in segmentation.segments] == ["a\n", "\n\nb\n \n"]


def test_aliases_resolve_and_unknown_names_list_choices():
    assert segmenters.get("newline") is segmenters.get("line")
    assert segmenters.get("fixed") is segmenters.get("fixed_tokens")
    with pytest.raises(KeyError, match="unknown segmenter 'nope'; valid choices: keyword, hybrid, line"):
        segmenters.get("nope")


def test_each_segmenter_declares_how_far_its_k_reaches_on_a_text():
    """The K slider reads the chosen segmenter's ``k_reach``: the pieces it cuts with no K (hybrid's keyword and
    line pieces, one per word for word_starts), a non-blank token per piece for fixed_tokens, and none for one
    that takes no K; no K gives more segments than the reach."""
    inp = word_input("First we add.\nThen 3 + 4 = 7.\nSo the answer is 7.")
    assert segmenters.get("line").k_reach(inp) is None
    assert segmenters.get("fixed_tokens").k_reach(inp) == len(inp.text.split())  # a newline joins the next word
    assert segmenters.get("word_starts").k_reach(inp) == len(word_starts(inp)) + 1
    reach = segmenters.get("hybrid").k_reach(inp)
    assert reach == 3 and segmenters.get("hybrid")(k=reach).segment(inp).k == reach
    for name in segmenters.having(targets_count=True):  # no K cuts more pieces than the reach
        top = segmenters.get(name).k_reach(inp)
        assert max(segmenters.get(name)(k=k).segment(inp).k for k in range(1, inp.n_tokens + 2)) <= top, name
