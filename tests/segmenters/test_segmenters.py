"""Every segmenter tiles its region exactly; rule-by-rule checks of each strategy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rredcot_viz.errors import ConfigError, TraceError
from rredcot_viz.segmenters import SegmenterInput, segmenters
from rredcot_viz.segmenters.hybrid import merge_pieces
from rredcot_viz.segmenters.scope import reasoning_end


def char_input(text: str, entropies=None, step_spans=None) -> SegmenterInput:
    """One token per character (offsets are exact), with given or flat entropies."""
    h = np.ones(len(text)) if entropies is None else np.asarray(entropies, dtype=float)
    return SegmenterInput(text, tuple(range(len(text))), h, step_spans)


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
        ["hybrid", "keyword", "line", "paragraph", "sentence", "fixed_tokens", "delimiter", "adaptive_entropy"]
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
    segmenter = (
        segmenters.get(name)(k=k) if name in ("hybrid", "fixed_tokens", "adaptive_entropy") else segmenters.get(name)()
    )
    segmentation = segmenter.segment(inp)
    assert_tiles(segmentation, inp)
    if k is not None and name == "hybrid":
        assert segmentation.k <= k
    assert set(segmentation.cuts) <= set(segmenter.candidate_cuts(inp)) or name == "adaptive_entropy"


def test_keyword_cuts_go_before_markers_and_after_newlines():
    text = "We add 3 and 4. So we get 7.\nWait, check: 3 + 4 = 7. Therefore it holds."
    segmentation = segmenters.get("keyword")().segment(char_input(text))
    assert [s.text for s in segmentation.segments] == [
        "We add 3 and 4. ",
        "So we get 7.\n",
        "Wait, check: 3 + 4 = 7. ",
        "Therefore it holds.",
    ]
    assert [s.boundary_kind for s in segmentation.segments] == ["start", "keyword", "newline", "keyword"]
    # a marker inside a sentence is not a boundary, and "Sort" is not "So"
    assert segmenters.get("keyword")().segment(char_input("Sort them. But not now, so what")).k == 2


def test_whitespace_only_pieces_merge_forward():
    """METHOD.md §2.1 rule 4: the lone newline pieces join the following piece; a blank tail the previous."""
    segmentation = segmenters.get("line")().segment(char_input("a\n\n\nb\n \n"))
    assert [s.text for s in segmentation.segments] == ["a\n", "\n\nb\n \n"]


def test_hybrid_merge_order_sum_score():
    """Pieces [0,2) [2,4) [4,6) [6,8) with entropy sums 1, 5, 1, 1: pair sums 6, 6, 2 -> merge pieces 2+3
    first; then sums 6, 7 -> merge 0+1 (leftmost minimum)."""
    entropies = np.array([0.5, 0.5, 2.5, 2.5, 0.5, 0.5, 0.5, 0.5])
    cuts, history = merge_pieces([0, 2, 4, 6, 8], entropies, 2, "sum")
    assert cuts == [4]
    assert [(m.left, m.score) for m in history] == [(2, 2.0), (0, 6.0)]
    assert [m.cuts_after for m in history] == [(2, 4), (4,)]


def test_hybrid_merge_order_boundary_score_keeps_high_entropy_boundaries():
    """Boundary score = entropy of the right piece's first token: the K-1 highest boundaries survive."""
    entropies = np.array([0, 0, 3.0, 0, 1.0, 0, 2.0, 0, 0.5, 0])
    cuts, history = merge_pieces([0, 2, 4, 6, 8, 10], entropies, 3, "boundary")
    assert cuts == [2, 6]  # boundaries with entropy 3.0 and 2.0
    assert [m.score for m in history] == [0.5, 1.0]


def test_hybrid_ties_go_left_and_history_replays():
    """Four pieces of sum 2: pair sums 4, 4, 4 -> merge the leftmost; then 6, 4 -> merge pieces 1+2."""
    inp = char_input("a\nb\nc\nd\n", np.ones(8))
    segmentation = segmenters.get("hybrid")(k=2).segment(inp)
    assert segmentation.initial_cuts == (2, 4, 6)
    assert [(m.left, m.score) for m in segmentation.merge_history] == [(0, 4.0), (1, 4.0)]
    assert segmentation.cuts == (4,) and segmentation.merge_history[-1].cuts_after == segmentation.cuts


def test_k_larger_than_candidates_is_clamped_with_a_warning():
    segmentation = segmenters.get("hybrid")(k=10).segment(char_input("a\nb\nc"))
    assert segmentation.k == 3
    assert "k=10 asks for more segments than the 3 keyword/newline pieces allow" in segmentation.warnings[0]


def test_sentence_rules():
    text = "Ok. This is a longer sentence! Is it? Yes it is a question.\n\nFinal part without a stop"
    segmentation = segmenters.get("sentence")().segment(char_input(text))
    assert [s.text for s in segmentation.segments] == [
        "Ok. This is a longer sentence! ",
        "Is it? Yes it is a question.\n\n",
        "Final part without a stop",
    ]


def test_fixed_tokens_every_l_and_snapped():
    inp = char_input("abcdefghij")
    assert segmenters.get("fixed_tokens")(length=3, snap_window=0).segment(inp).cuts == (3, 6, 9)
    assert segmenters.get("fixed_tokens")(k=2, snap_window=0).segment(inp).cuts == (5,)
    words = char_input("aaaaaa bbbbbb")  # cut 5 is mid-word and moves to the space at 6; 10 has no word start
    assert segmenters.get("fixed_tokens")(length=5, snap_window=2).segment(words).cuts == (6, 10)


def test_a_delimiter_that_ends_the_text_adds_no_piece():
    """A cut at the very end is after the last token, not before it (a multi-character last token stays whole)."""
    text = "one</thought>two</thought>"
    inp = SegmenterInput(text, (0, 3, 13, 16, 25), np.ones(5))  # "one" "</thought>" "two" "</thought" ">"
    assert inp.char_to_token_cut(len(text)) == 5 and inp.char_to_token_cut(len(text) - 1) == 4
    assert [s.text for s in segmenters.get("delimiter")().segment(inp).segments] == ["one</thought>", "two</thought>"]


def test_delimiter_after_string_and_before_regex():
    text = "one</thought>two</thought>three"
    assert [s.text for s in segmenters.get("delimiter")().segment(char_input(text)).segments] == [
        "one</thought>",
        "two</thought>",
        "three",
    ]
    steps = "Step 1: a\nStep 2: b\nStep 3: c"
    regex = segmenters.get("delimiter")(delimiter=r"^Step \d+:", regex=True).segment(char_input(steps))
    assert [s.text for s in regex.segments] == ["Step 1: a\n", "Step 2: b\n", "Step 3: c"]
    with pytest.raises(ConfigError, match="does not compile"):
        segmenters.get("delimiter")(delimiter="(", regex=True)


def test_given_reproduces_steps_exactly():
    steps = ["First we add.", "Then we carry the one.", "So the sum is \\boxed{12}."]
    text = "\n\n".join(steps)
    spans, cursor = [], 0
    for step in steps:
        start = text.index(step, cursor)
        spans.append(start)
        cursor = start + len(step)
    step_spans = tuple(zip([0, *spans[1:]], [*spans[1:], len(text)], strict=False))
    segmentation = segmenters.get("steps")().segment(char_input(text, step_spans=step_spans))
    assert [s.text.strip() for s in segmentation.segments] == steps
    with pytest.raises(TraceError, match="needs a trace with pre-split steps"):
        segmenters.get("given")().segment(char_input(text))


def test_adaptive_cuts_at_entropy_peaks_min_length_apart():
    h = np.zeros(100)
    h[[20, 25, 60]] = [5.0, 4.0, 6.0]
    inp = SegmenterInput("x" * 100, tuple(range(100)), h)
    segmenter = segmenters.get("adaptive")(kappa=1.0, min_tokens=16, word_initial_only=False)
    assert segmenter.segment(inp).cuts == (20, 60)  # 25 is within 16 tokens of the stronger peak 20
    assert segmenters.get("adaptive")(kappa=1.0, word_initial_only=False, k=2).segment(inp).cuts == (60,)
    long = segmenters.get("adaptive")(kappa=10.0, min_tokens=4, max_tokens=30, word_initial_only=False)
    assert all(s.n_tokens <= 30 for s in long.segment(inp).segments)


def test_aliases_resolve_and_unknown_names_list_choices():
    assert segmenters.get("newline") is segmenters.get("line")
    assert segmenters.get("fixed") is segmenters.get("fixed_tokens")
    with pytest.raises(KeyError, match="unknown segmenter 'nope'; valid choices: keyword, hybrid, line"):
        segmenters.get("nope")


def test_reasoning_scope():
    text = "We add 3 and 4.\nSo we get 7. Therefore, the final answer is \\boxed{7}."
    assert text[: reasoning_end(text)] == "We add 3 and 4.\nSo we get 7. "
    thinking = "Let me think. 3 + 4 = 7.</think>\n\nThe answer is 7."
    assert thinking[: reasoning_end(thinking)] == "Let me think. 3 + 4 = 7."
    assert reasoning_end("\\boxed{7}") == len("\\boxed{7}")  # nothing but the answer: segment it all
    assert reasoning_end(text, "whole") == len(text)
    assert reasoning_end(thinking, "think") == thinking.index("</think>")
