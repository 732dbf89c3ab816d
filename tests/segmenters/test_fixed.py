"""The fixed-token segmenter (segmenters/fixed.py): every L tokens, snapped to word starts."""

from __future__ import annotations

from rredcot_viz.segmenters import segmenters

from .inputs import char_input


def test_fixed_tokens_every_l_and_snapped():
    inp = char_input("abcdefghij")
    assert segmenters.get("fixed_tokens")(length=3, snap_window=0).segment(inp).cuts == (3, 6, 9)
    assert segmenters.get("fixed_tokens")(k=2, snap_window=0).segment(inp).cuts == (5,)
    words = char_input("aaaaaa bbbbbb")  # cut 5 is mid-word and moves to the space at 6; 10 has no word start
    assert segmenters.get("fixed_tokens")(length=5, snap_window=2).segment(words).cuts == (6, 10)
