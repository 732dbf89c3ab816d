"""The cases the attribution tests share: a toy whose answer probability is a set function of the line segments
present (exact LOO and Shapley values), and one short trace for the tiny-model methods."""

from __future__ import annotations

import math

from toy import ToyLanguageModel

from rredcot_viz.engine import Analyzer
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

SEGMENT_TEXT = ["aa\n", "bb\n", "cc\n", "dd\n", "ee\n", "ff\n", "gg\n", "hh\n", "ii\n", "jj\n"]


def make(k: int, f):
    """A toy whose p(answer "7" | context) = exp(f(segments present) - 3); "}" then has probability 0.5."""

    def rule(context: str) -> dict[str, float]:
        if not context.endswith("="):
            return {"}": 0.5} if context.endswith("=7") else {}
        present = tuple(i for i, text in enumerate(SEGMENT_TEXT[:k]) if text in context)
        return {"7": math.exp(f(present) - 3.0)}

    trace = Trace("Q?", "".join(SEGMENT_TEXT[:k]) + "The answer is \\boxed{7}.", reference_answer="7")
    analyzer = Analyzer(ToyLanguageModel(rule))
    return analyzer.context(trace), analyzer.segment(trace, segmenters.get("line")())


TRACE = Trace(
    "Tom has 3 apples and buys 5 more?",
    "Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nWait, let me check again.\nThe answer is \\boxed{8}.",
    reference_answer="8",
)
