"""Return equivalence over random traces and settings: sum(sigma) == R to 1e-6 under exact_sum."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toy import ToyLanguageModel

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace


def rule(context: str) -> dict[str, float]:
    """Probabilities that depend on the context's length and content, so values vary across states."""
    digest = sum(map(ord, context[-7:])) % 97
    return {"7": 0.01 + digest / 400, "}": 0.2 + (len(context) % 11) / 30}  # sums stay below 0.8


WORDS = st.sampled_from(["We add", " 3", " and 4", ".", " So", " Wait,", "\n", "\n\n", " Therefore", " 7"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(WORDS, min_size=1, max_size=25),
    correct=st.booleans(),
    segmenter=st.sampled_from(["hybrid", "keyword", "line", "sentence", "fixed_tokens", "adaptive_entropy"]),
    k=st.integers(1, 8),
    estimator=st.sampled_from(["rredcot", "answer_only", "continue_only", "uniform"]),
    aggregation=st.sampled_from(["mean_prob", "seq_prob", "geo_mean", "candidate_normalized"]),
)
def test_sum_of_sigma_is_the_outcome(words, correct, segmenter, k, estimator, aggregation):
    answer = "7" if correct else "8"
    trace = Trace(
        "Add 3 and 4.",
        "We" + "".join(words) + f" The answer is \\boxed{{{answer}}}.",
        reference_answer="7",
        reference_solution="3 + 4 = \\boxed{7}",
    )
    chosen_segmenter = (
        segmenters.get(segmenter)(k=k) if segmenter in ("hybrid", "fixed_tokens") else segmenters.get(segmenter)()
    )
    options = {} if estimator == "uniform" else {"aggregation": aggregation}
    result = Analyzer(ToyLanguageModel(rule), AnalysisConfig()).analyze(
        trace, chosen_segmenter, estimators.get(estimator)(**options)
    )
    assert abs(result.sigma.sum() - (1.0 if correct else 0.0)) < 1e-6
    assert len(result.sigma) == result.k == len(result.values.values) - 1
