"""Comparing methods on one segmentation (tiny model), the published-MC overlay, and the compare CLI."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.attribution.agreement import (
    control_agreement,
    control_scores,
    per_trace_agreement,
    per_trace_control,
    segment_agreement,
    value_at_budget,
)
from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import ConfigError, UnknownNameError
from rredcot_viz.estimators import estimators
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


@pytest.mark.integration
def test_compare_cli_prints_table_matrix_and_costs(capsys):
    from rredcot_viz.cli import main
    from rredcot_viz.paths import SAMPLE_TRACES_DIR

    code = main(
        [
            "compare",
            str(SAMPLE_TRACES_DIR / "arithmetic.jsonl"),
            "--trace",
            "sample-bakery-correct",
            "--k",
            "3",
            "--methods",
            "rredcot,mc,loo,shapley",
            "--mc-rollouts",
            "2",
            "--mc-max-tokens",
            "16",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "segment  text" in out and "spearman between methods" in out
    import re

    gap = re.search(r"efficiency_gap=(\S+);", out)
    assert gap and abs(float(gap.group(1))) < 1e-9 and "exact over 8 subsets" in out
    cost_lines = [line for line in out.splitlines() if line.startswith("  mc ")]
    assert len(cost_lines) == 1 and "generated" in cost_lines[0]


def test_controls_and_non_final_agreement():
    reference = np.array([0.1, 0.3, 0.2, 0.9])
    np.testing.assert_array_equal(control_scores("last_segment", 4), [0, 0, 0, 1])
    np.testing.assert_array_equal(control_scores("position", 3), [1, 2, 3])
    assert segment_agreement(reference, reference, final=False) == pytest.approx(1.0)
    assert np.isnan(control_agreement("last_segment", reference, final=False))  # constant on non-final segments
    assert control_agreement("position", reference, "kendall", final=False) == pytest.approx(1 / 3)
    random = control_agreement("random", reference, final=False, draws=100, seed=3)
    assert random == control_agreement("random", reference, final=False, draws=100, seed=3) and abs(random) < 0.3
    with pytest.raises(UnknownNameError):
        control_scores("nope", 3)
    with pytest.raises(ValueError, match="seeded generator"):
        control_scores("random", 3)


def test_per_trace_agreement_and_controls_over_traces():
    references = [np.array([0.1, 0.3, 0.2, 0.9]), np.array([0.5, 0.5, 0.5, 0.0])]
    scores = [np.array([0.0, 1.0, 0.5, 2.0]), np.array([3.0, 2.0, 1.0, 0.0])]
    non_final = per_trace_agreement(scores, references, final=False)
    assert non_final[0] == pytest.approx(1.0) and np.isnan(non_final[1])  # 2nd reference is flat before the end
    np.testing.assert_allclose(per_trace_agreement(scores, references, "kendall")[1], 3 / 18**0.5)  # tau-b, 3 ties
    np.testing.assert_allclose(per_trace_control("last_segment", references), [0.7745966692414834, -1.0])
    assert np.isnan(per_trace_control("last_segment", references, final=False)).all()
    position = per_trace_control("position", references, final=False)
    assert position[0] == pytest.approx(0.5) and np.isnan(position[1])


def test_value_at_budget_interpolates_in_log_cost_and_says_when_clamped():
    budgets, values = [100.0, 200.0, 400.0], [0.1, 0.3, 0.5]
    assert value_at_budget(budgets, values, 200.0) == (pytest.approx(0.3), "interpolated")
    assert value_at_budget(budgets, values, 100 * 2**0.5)[0] == pytest.approx(0.2)  # halfway in log cost
    assert value_at_budget(budgets, values, 50.0) == (0.1, "clamped")
    assert value_at_budget(budgets[::-1], values[::-1], 1000.0) == (0.5, "clamped")
    assert value_at_budget(budgets, [0.1, float("nan"), 0.5], 200.0)[0] == pytest.approx(0.3)  # NaN point skipped
    value, how = value_at_budget(budgets, [float("nan")] * 3, 200.0)
    assert np.isnan(value) and how == "undefined"
