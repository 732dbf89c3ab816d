"""The sentence segmenter (segmenters/sentence.py)."""

from __future__ import annotations

from rredcot_viz.segmenters import segmenters

from .inputs import char_input


def test_sentence_rules():
    text = "Ok. This is a longer sentence! Is it? Yes it is a question.\n\nFinal part without a stop"
    segmentation = segmenters.get("sentence")().segment(char_input(text))
    assert [s.text for s in segmentation.segments] == [
        "Ok. This is a longer sentence! ",
        "Is it? Yes it is a question.\n\n",
        "Final part without a stop",
    ]
