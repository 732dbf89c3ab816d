"""Which part of a response is segmented (METHOD.md §2, ``segment.scope``).

Default ``reasoning``: the text inside the thinking block if there is one (before ``</think>``), otherwise
the response up to the sentence that states the final answer; that final-answer text is the Y action and
not a segment. ``whole`` segments everything; ``think`` stops only at ``</think>`` (used for pre-split steps,
which must all be segments so that step labels line up).
"""

from __future__ import annotations

import re
from typing import Literal

from rredcot_viz.traces.answers import extract_answer_detailed

Scope = Literal["reasoning", "whole", "think"]
THINK_END = "</think>"
_SENTENCE_BREAK = re.compile(r"(?:[.!?](?=\s)|\n)\s*")


def reasoning_end(text: str, scope: Scope = "reasoning") -> int:
    """Character offset where the segmented region ends (the region is ``text[:offset]``)."""
    if scope == "whole":
        return len(text)
    think = text.find(THINK_END)
    if think > 0 and text[:think].strip():
        return think
    if scope == "think":
        return len(text)
    found = extract_answer_detailed(text)
    if found is None or found.method == "last_number":
        return len(text)
    start = 0
    for match in _SENTENCE_BREAK.finditer(text, 0, found.start):
        start = match.end()
    if not text[:start].strip():  # the answer sentence is the whole response: segment everything
        return len(text)
    return start
