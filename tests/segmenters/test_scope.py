"""The reasoning scope (segmenters/scope.py): where the reasoning ends and the answer begins."""

from __future__ import annotations

from rredcot_viz.segmenters.scope import reasoning_end


def test_reasoning_scope():
    text = "We add 3 and 4.\nSo we get 7. Therefore, the final answer is \\boxed{7}."
    assert text[: reasoning_end(text)] == "We add 3 and 4.\nSo we get 7. "
    thinking = "Let me think. 3 + 4 = 7.</think>\n\nThe answer is 7."
    assert thinking[: reasoning_end(thinking)] == "Let me think. 3 + 4 = 7."
    assert reasoning_end("\\boxed{7}") == len("\\boxed{7}")  # nothing but the answer: segment it all
    assert reasoning_end(text, "whole") == len(text)
    assert reasoning_end(thinking, "think") == thinking.index("</think>")
