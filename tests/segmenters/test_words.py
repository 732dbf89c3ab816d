"""The word-start segmenter (segmenters/words.py): K pieces at distinct word starts nearest to equal lengths."""

from __future__ import annotations

from rredcot_viz.segmenters import segmenters

from .inputs import char_input


def pieces(text: str, k: int | None) -> list[str]:
    return [s.text for s in segmenters.get("word_starts")(k=k).segment(char_input(text)).segments]


def test_cuts_at_the_word_starts_nearest_to_equal_lengths():
    text = "aa bb cc dd ee ff gg hh"  # 23 one-character tokens; targets 23/4 = 5.75, 11.5, 17.25
    assert pieces(text, 4) == ["aa bb ", "cc dd ", "ee ff ", "gg hh"]
    assert pieces("aaaaaaaaa b c d", 3) == ["aaaaaaaaa ", "b ", "c d"]  # the long word cannot be split


def test_k_pieces_where_the_text_has_k_words_and_fixed_tokens_gets_fewer():
    text = "So x = 12 now."  # five words
    assert pieces(text, 5) == ["So ", "x ", "= ", "12 ", "now."]
    fixed = segmenters.get("fixed_tokens")(k=5).segment(char_input(text))
    assert fixed.k == 4  # the control: L = ceil(14 / 5) = 3 cuts at 3, 6, 9, 12; 12 snaps to 10, a blank piece


def test_a_text_of_fewer_words_than_k_gets_one_piece_per_word():
    assert pieces("It is 7.", 5) == ["It ", "is ", "7."]


def test_no_piece_is_blank_and_a_digit_run_is_one_word():
    assert pieces("x  =  12 +  30", None) == ["x  ", "=  ", "12 ", "+  ", "30"]
    assert pieces("a\n\nb", 5) == ["a\n\n", "b"]


def test_k_one_and_a_single_word():
    assert pieces("one two three", 1) == ["one two three"]
    assert pieces("word", 3) == ["word"]
