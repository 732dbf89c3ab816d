"""Which part of a response is segmented (docs/method.md §2, ``segment.scope``).

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
    return region_end(text, scope)[0]


def region_end(text: str, scope: Scope = "reasoning") -> tuple[int, str | None]:
    """``reasoning_end`` and, when the ``reasoning`` scope had to segment the whole response instead, why (so the
    switch is shown, not silent); None otherwise."""
    if scope == "whole":
        return len(text), None
    think = text.find(THINK_END)
    if think > 0 and text[:think].strip():
        return think, None
    if scope == "think":
        return len(text), None
    found = extract_answer_detailed(text)
    if found is None or found.method == "last_number":
        return len(text), (
            "scope 'reasoning': the response states no final answer (no </think>, \\boxed{} or 'the answer is'), "
            "so the whole response is segmented"
        )
    start = 0
    for match in _SENTENCE_BREAK.finditer(text, 0, found.start):
        start = match.end()
    if not text[:start].strip():
        return len(text), "scope 'reasoning': the answer sentence is the whole response, so all of it is segmented"
    return start, None
