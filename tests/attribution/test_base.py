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
    # each block: the repeated token, the later segments, "=" and "7}" but its last token (predicted, never read)
    blocks = [1 + 3 * (4 - 1 - t) + 1 + 2 - 1 for t in range(4)] + [1 + 1 + 2 - 1]
    assert processed == len(context.ids) + sum(blocks)


def test_missing_target_is_named(tiny):
    """The default target is the trace's own answer (docs/method.md §7), so a trace with no reference runs; the
    reference target says what is missing and names the switch back."""
    trace = Trace("Q?", "a\nb\nThe answer is 3.")
    context = Analyzer(tiny).context(trace)
    segmentation = Analyzer(tiny).segment(trace, segmenters.get("line")())
    own = attributions.get("loo")().attribute(context, segmentation)
    assert own.values.shape == (segmentation.k,) and own.notes == []
    with pytest.raises(MissingReferenceError, match="reference answer.*use target=own"):
        attributions.get("loo")(target="reference").attribute(context, segmentation)


def test_default_target_is_the_traces_own_answer():
    """On a failed trace the two targets differ: the default scores the answer the trace gave, "reference" the
    right one; an own answer that is only the response's last number is noted, not used silently."""
    context, _ = make(2, lambda s: 0.0)
    failed = context.trace.with_changes(cot="aa\nbb\nThe answer is \\boxed{5}.", reference_answer="7")
    analyzer = Analyzer(context.lm)
    loo = attributions.get("loo")
    assert loo().config.target == "own"
    assert (
        loo().target(analyzer.context(failed)) == "5}"
        and loo(target="reference").target(analyzer.context(failed)) == "7}"
    )
    unstated = failed.with_changes(cot="aa\nbb\nso 5")
    segmentation = analyzer.segment(unstated, segmenters.get("line")())
    result = loo().attribute(analyzer.context(unstated), segmentation)
    assert result.notes == ["the trace's own answer '5' is its last number: the response states no answer explicitly"]
