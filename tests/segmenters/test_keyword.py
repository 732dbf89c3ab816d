"""The keyword segmenter (segmenters/keyword.py): cuts before markers and after newlines."""

from __future__ import annotations

from rredcot_viz.segmenters import segmenters

from .inputs import char_input


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
