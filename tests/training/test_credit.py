"""The trainer credits a rollout with the analyzer's own scoring plan: same segments, same sigma."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training import TrainConfig
from rredcot_viz.training.credit import group_sigmas, segment_rollout
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.sampler import problem_prompt
from rredcot_viz.training.task import Problem

PROBLEM = Problem(
    "Tom has 3 apples and buys 5 more. How many apples does he have?",
    "8",
    "Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nThe answer is \\boxed{8}.",
    prompt="Question: Tom has 3 apples and buys 5 more. How many apples does he have?",
)
TEXT = (
    "Tom starts with 3 apples.\nWait, let me check again.\nHe buys 5 more, so 3 + 5 = 8.\n"
    "Next, we subtract 6 to get 42.\nSo the total is 8.\nTherefore, the final answer is \\boxed{8}."
)


@pytest.mark.parametrize("estimator", ["rredcot", "answer_only"])
def test_trainer_and_analyzer_give_the_same_segments_and_sigma(policy, estimator):
    prompt_text = problem_prompt(policy, PROBLEM)
    trace = Trace(
        PROBLEM.question,
        TEXT,
        prompt=prompt_text,
        reference_answer=PROBLEM.answer,
        reference_solution=PROBLEM.solution,
        correct=True,
    )
    analyzer = Analyzer(policy, AnalysisConfig(variant="exact_sum"))
    result = analyzer.analyze(trace, segmenters.get("hybrid")(k=3), estimators.get(estimator)())
    entropies = analyzer.context(trace).score_stats().entropies

    prompt_ids = policy.encode_prompt(prompt_text)
    ids = policy.encode(TEXT)
    assert policy.decode(ids) == TEXT  # the analyzer re-tokenises the text: make the two see the same ids
    rollout = TrainRollout(prompt_ids, ids, TEXT, 1.0, 0, info={"entropies": entropies.tolist()})
    failed = TrainRollout(prompt_ids, policy.encode("So the total is 42."), "So the total is 42.", 0.0, 1)
    sigmas = group_sigmas(
        policy, TrainConfig(segments=3), estimators.get(estimator)(), prompt_ids, [rollout, failed], PROBLEM
    )

    prefixes = result.segmentation.state_prefixes
    assert result.k == 3 and rollout.segments == list(itertools.pairwise(prefixes))
    assert rollout.info["segment_chars"] == [s.char_span for s in result.segmentation.segments]
    np.testing.assert_allclose(rollout.info["values"][:-1], result.values.values[:-1], atol=1e-6)
    np.testing.assert_allclose(sigmas[0], result.sigma, atol=1e-6)
    assert abs(sigmas[0].sum() - 1.0) < 1e-9  # exact_sum: the credits add up to the reward


def test_reasoning_scope_leaves_the_answer_line_to_the_last_segment(policy):
    text = "3 + 5 = 8.\nSo it is 8.\nThe answer is \\boxed{8}."
    ids = policy.encode(text)
    rollout = TrainRollout([], ids, text, 1.0, 0)
    prefixes = segment_rollout(policy, rollout, TrainConfig(segments=4))
    answer_token = next(i for i in range(len(ids)) if "answer" in policy.decode(ids[: i + 1]))
    assert prefixes[-1] <= answer_token < len(ids)  # the answer sentence is outside every segment
    whole = segment_rollout(policy, TrainRollout([], ids, text, 1.0, 0), TrainConfig(segments=4, credit_scope="whole"))
    assert whole[-1] == len(ids)


def test_thought_delimited_completions_are_cut_into_their_thoughts(policy):
    text = "Add 3 and 5.</thought>That gives 8.</thought>The answer is \\boxed{8}.</thought>"
    rollout = TrainRollout([], policy.encode(text), text, 1.0, 0)
    segment_rollout(policy, rollout, TrainConfig(segments=2, credit_scope="whole"))
    assert [text[a:b] for a, b in rollout.info["segment_chars"]] == [
        "Add 3 and 5.</thought>",
        "That gives 8.</thought>",
        "The answer is \\boxed{8}.</thought>",
    ]
