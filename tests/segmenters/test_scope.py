"""The reasoning scope (segmenters/scope.py): where the reasoning ends and the answer begins."""

from __future__ import annotations

from rredcot_viz.segmenters.scope import reasoning_end, region_end


def test_reasoning_scope():
    text = "We add 3 and 4.\nSo we get 7. Therefore, the final answer is \\boxed{7}."
    assert text[: reasoning_end(text)] == "We add 3 and 4.\nSo we get 7. "
    thinking = "Let me think. 3 + 4 = 7.</think>\n\nThe answer is 7."
    assert thinking[: reasoning_end(thinking)] == "Let me think. 3 + 4 = 7."
    assert reasoning_end("\\boxed{7}") == len("\\boxed{7}")  # nothing but the answer: segment it all
    assert reasoning_end(text, "whole") == len(text)
    assert reasoning_end(thinking, "think") == thinking.index("</think>")


def test_the_reasoning_scope_says_when_it_widens():
    assert region_end("We add 3 and 4.\nThe answer is 7.") == (len("We add 3 and 4.\n"), None)
    assert region_end("We add 3 and 4 to get 7")[1].startswith("scope 'reasoning': the response states no final answer")
    assert region_end("\\boxed{7}")[1].endswith("the answer sentence is the whole response, so all of it is segmented")
    assert region_end("We add 3 and 4 to get 7", "whole") == (len("We add 3 and 4 to get 7"), None)
