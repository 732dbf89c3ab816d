"""What every attribution shares (attribution/base.py), through LOO: subsets reuse the trace prefix, and a
missing target is named."""

from __future__ import annotations

import pytest

from rredcot_viz.attribution import attributions
from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import MissingReferenceError
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

from .cases import make


def test_subsets_reuse_the_trace_prefix():
    """LOO's f(N without t) reuses the trace up to segment t: only the later segments are re-encoded."""
    context, segmentation = make(4, lambda s: 0.1 * len(s))
    lm = context.lm
    attributions.get("loo")(trigger="=").attribute(context, segmentation)
    processed = lm.meter.history[-1][1].tokens_processed
    blocks = [1 + 3 * (4 - 1 - t) + 1 + 2 for t in range(4)] + [1 + 1 + 2]  # repeated token, later segments, "=", "7}"
    assert processed == len(context.ids) + sum(blocks)


def test_missing_target_is_named(tiny):
    trace = Trace("Q?", "a\nb\nThe answer is 3.")
    context = Analyzer(tiny).context(trace)
    segmentation = Analyzer(tiny).segment(trace, segmenters.get("line")())
    with pytest.raises(MissingReferenceError, match="reference answer.*use target=own"):
        attributions.get("loo")().attribute(context, segmentation)
    own = attributions.get("loo")(target="own").attribute(context, segmentation)
    assert own.values.shape == (segmentation.k,)
