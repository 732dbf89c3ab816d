"""Comparing methods on one segmentation (workflows/compare.py, tiny model)."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import UnknownNameError
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.compare import compare, method_kind

TRACE = Trace(
    "Tom has 3 apples and buys 5 more?",
    "Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nWait, let me check again.\nThe answer is \\boxed{8}.",
    reference_answer="8",
    reference_solution="3 + 5 = \\boxed{8}",
)


def test_all_methods_share_one_segmentation(tiny):
    methods = ["rredcot", "uniform", "mc", "loo", "shapley", "grad_x_input", "attention"]
    options = {"mc": {"rollouts": 2, "max_new_tokens": 4}}
    comparison = compare(Analyzer(tiny), TRACE, segmenters.get("line")(), methods, options)
    k = comparison.segmentation.k
    assert k == 3 and list(comparison.methods) == methods
    for name, result in comparison.methods.items():
        assert result.scores.shape == (k,), name
        assert result.kind == method_kind(name)
    assert comparison.methods["mc"].cost.tokens_generated > 0 and comparison.methods["uniform"].cost.calls == 0
    names, matrix = comparison.matrix("spearman")
    assert names == methods and np.allclose(np.diag(matrix)[[0, 3]], 1.0)
    rows = comparison.rows()
    assert [row["segment"] for row in rows] == [1, 2, 3] and set(methods) <= set(rows[0])
    with pytest.raises(UnknownNameError, match="unknown method 'nope'"):
        method_kind("nope")


def test_a_cached_method_keeps_the_cost_it_had_when_computed(tiny):
    from rredcot_viz.workflows.compare import remembered_cost, run_sampling

    analyzer, segmenter = Analyzer(tiny), segmenters.get("line")()
    mc = {"rollouts": 2, "max_new_tokens": 4}
    run_sampling(analyzer, TRACE, segmenter, "mc", mc)  # the slow part, as the app's job runs it
    segmentation = analyzer.segment(TRACE, segmenter)
    drawn, at, by = remembered_cost(analyzer, TRACE, segmentation, "mc", mc)
    assert drawn.tokens_generated > 0 and drawn.calls == 4  # stats, then 1 call per state
    first = compare(analyzer, TRACE, segmenter, ["rredcot", "mc"], {"mc": mc})
    assert not first.methods["rredcot"].cached and first.methods["rredcot"].cost.calls > 0
    assert first.methods["rredcot"].cost.source(False) == "computed now"
    mc_result = first.methods["mc"]
    assert mc_result.cached and mc_result.cost == drawn  # not the 0 tokens it costs now
    # the run the page just finished reads as that job's, not as an old cache entry ("cached")
    assert (
        mc_result.cost.source(True, mc_result.computed_at, mc_result.computed_by).startswith(
            "computed by the Monte Carlo job at "
        )
        and at == mc_result.computed_at
        and by == "the Monte Carlo job"
    )
    again = compare(analyzer, TRACE, segmenter, ["rredcot", "mc", "uniform"], {"mc": mc})
    assert (
        again.methods["rredcot"].cached
        and again.methods["rredcot"].cost.as_dict() == first.methods["rredcot"].cost.as_dict()
    )
    assert not again.methods["uniform"].cached and again.methods["uniform"].cost.calls == 0  # never cost anything
    assert again.methods["rredcot"].cost.source(True, again.methods["rredcot"].computed_at).startswith("cached · ")
    assert again.methods["uniform"].cost.source(False) == "no model call now (cached, or needs none)"  # not at 0 s
    other = compare(analyzer, TRACE, segmenter, ["mc"], {"mc": {**mc, "seed": 1}})  # other settings: other cost
    assert not other.methods["mc"].cached and other.methods["mc"].cost.tokens_generated > 0

    whole = first.rows(None)
    assert [row["text"] for row in whole] == [s.text for s in first.segmentation.segments]
    assert all(len(row["text"]) <= 40 for row in first.rows())
