"""The published-MC overlay (estimators/published.py): dataset values on the dataset's own steps."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

TRACE = Trace(
    "Tom has 3 apples and buys 5 more?",
    "Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nWait, let me check again.\nThe answer is \\boxed{8}.",
    reference_answer="8",
    reference_solution="3 + 5 = \\boxed{8}",
)


def test_published_values_need_the_given_steps(tiny):
    steps = ("Tom starts with 3 apples.", "He buys 5 more, so 3 + 5 = 8.", "The answer is \\boxed{8}.")
    trace = Trace(
        TRACE.question,
        "\n\n".join(steps),
        reference_answer="8",
        steps=steps,
        step_values={"mc_accuracy": (0.2, 0.5, 0.9)},
    )
    analyzer = Analyzer(tiny)
    result = analyzer.analyze(trace, segmenters.get("given")(), estimators.get("published_mc")())
    np.testing.assert_allclose(result.values.values, [0.2, 0.5, 0.9, 1.0])
    np.testing.assert_allclose(result.sigma, [0.3, 0.4, 0.3])
    with pytest.raises(ConfigError, match="use the 'given' segmenter"):
        analyzer.analyze(trace, segmenters.get("line")(), estimators.get("published_mc")())
