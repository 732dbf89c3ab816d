"""The trainer credits a rollout with the analyzer's own scoring plan: same segments, same sigma; the packing
after each rollout's own cache gives the log-probs of the former prompt-only packing, at a fraction of its
tokens; the estimator used (the fallback included) is recorded."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.coupling import grpo_advantages
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training import CreditConfig
from rredcot_viz.training.credit import (
    couple_group,
    credit_estimator,
    estimator_counts,
    group_sigmas,
    segment_rollout,
)
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
        policy, CreditConfig(k=3), estimators.get(estimator)(), prompt_ids, [rollout, failed], PROBLEM
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
    prefixes = segment_rollout(policy, rollout, CreditConfig(k=4))
    answer_token = next(i for i in range(len(ids)) if "answer" in policy.decode(ids[: i + 1]))
    assert prefixes[-1] <= answer_token < len(ids)  # the answer sentence is outside every segment
    whole = segment_rollout(policy, TrainRollout([], ids, text, 1.0, 0), CreditConfig(k=4, credit_scope="whole"))
    assert whole[-1] == len(ids)


def test_thought_delimited_completions_are_cut_into_their_thoughts(policy):
    text = "Add 3 and 5.</thought>That gives 8.</thought>The answer is \\boxed{8}.</thought>"
    rollout = TrainRollout([], policy.encode(text), text, 1.0, 0)
    segment_rollout(policy, rollout, CreditConfig(k=2, credit_scope="whole"))
    assert [text[a:b] for a, b in rollout.info["segment_chars"]] == [
        "Add 3 and 5.</thought>",
        "That gives 8.</thought>",
        "The answer is \\boxed{8}.</thought>",
    ]


PROSE = (  # no line breaks: where the hybrid segmenter cuts depends on the entropies
    "Tom starts with 3 apples. Wait, let me check again. He buys 5 more, so 3 + 5 = 8. Next, we subtract 6 to get "
    "42. So the total is 8. Alternatively, Hmm, Let me think step by step."
)


def test_without_recorded_entropies_the_rollout_is_cut_with_those_of_the_credit_pass(policy):
    """The TRL path has no sampling entropies: the credit call's own pass supplies them, so the hybrid segmenter
    cuts the rollout where the analyzer cuts the same text (with zeros, as before, it cut elsewhere)."""
    prompt_text = problem_prompt(policy, PROBLEM)
    trace = Trace(PROBLEM.question, PROSE, prompt=prompt_text, reference_answer="8", correct=True)
    analyzer = Analyzer(policy, AnalysisConfig(variant="exact_sum"))
    result = analyzer.analyze(trace, segmenters.get("hybrid")(k=3), estimators.get("answer_only")())
    ids = policy.encode(PROSE)
    assert policy.decode(ids) == PROSE
    rollout = TrainRollout(policy.encode_prompt(prompt_text), ids, PROSE, 1.0, 0)
    group_sigmas(policy, CreditConfig(k=3), estimators.get("answer_only")(), rollout.prompt_ids, [rollout],
                 PROBLEM)  # fmt: skip
    assert rollout.segments == list(itertools.pairwise(result.segmentation.state_prefixes))
    np.testing.assert_allclose(rollout.info["entropies"], analyzer.context(trace).score_stats().entropies, atol=1e-5)
    blind = TrainRollout(rollout.prompt_ids, ids, PROSE, 1.0, 0)
    segment_rollout(policy, blind, CreditConfig(k=3))
    assert blind.segments != rollout.segments


GROUP = (TEXT, "So the total is 42.\nThe answer is 42.", "", TEXT.replace("8", "9"), "Hmm.")


def group(lm, problem: Problem, texts: tuple[str, ...] = GROUP, entropies: bool = True):
    """A prompt and its rollouts, with entropies as the sampler records them (or zeros), so that both packings
    cut the rollouts alike."""
    prompt = lm.encode_prompt(problem_prompt(lm, problem))
    rollouts = [TrainRollout(prompt, lm.encode(t), t, float("8" in t), i) for i, t in enumerate(texts)]
    for r in rollouts:
        found = lm.token_stats(prompt + r.completion_ids, len(prompt)).entropies if entropies else None
        r.info["entropies"] = [0.0] * len(r.completion_ids) if found is None else found.tolist()
    return prompt, rollouts


def test_the_estimator_used_is_recorded_and_counted(policy):
    """A problem without a reference solution is credited by R-hat alone, and says so."""
    bare = Problem(PROBLEM.question, "8", None, prompt=PROBLEM.prompt)
    counts = []
    for problem, expected in ((PROBLEM, "rredcot"), (bare, "answer_only")):
        estimator = credit_estimator(CreditConfig(), problem)
        prompt, rollouts = group(policy, problem)
        group_sigmas(policy, CreditConfig(k=2), estimator, prompt, rollouts, problem)
        assert {r.info["credit_estimator"] for r in rollouts} == {expected}
        counts.append(expected)
    assert estimator_counts(counts, CreditConfig()) == {"credit_groups_rredcot": 1, "credit_groups_answer_only": 1}
    assert estimator_counts(["answer_only"] * 2, CreditConfig()) == {
        "credit_groups_rredcot": 0,
        "credit_groups_answer_only": 2,
    }
    assert estimator_counts([None, None], CreditConfig()) == {}  # a method that credits nothing logs nothing


class FlatValues:
    """An estimator whose values are constant (0.5, then the reward); its series and scoring are the real one's."""

    def __init__(self, estimator):
        self.estimator = estimator

    def __getattr__(self, name):
        return getattr(self.estimator, name)

    def combine(self, series, scores, n_states, outcome):
        result = self.estimator.combine(series, scores, n_states, outcome)
        result.values = np.append(np.full(n_states - 1, 0.5), outcome)
        return result


def test_constant_values_through_the_credit_path_give_grpo_advantages(policy):
    """docs/method.md §5's invariant, through the trainer's own path (segmenting, packed scoring, redistribution,
    coupling): constant values give GRPO's advantage on every token; the real values do not."""
    prompt = policy.encode_prompt(problem_prompt(policy, PROBLEM))
    texts = [
        TEXT,
        "Tom has 3 apples.\nSo 3 + 5 = 7.\nThe answer is 7.",
        "He buys 5 more.\nSo 3 + 5 = 8.\nThe answer is \\boxed{8}.",
    ]
    rewards = np.array([1.0, 0.0, 1.0])
    credit = CreditConfig(k=3)
    grpo = grpo_advantages(rewards)

    def advantages(estimator) -> list[np.ndarray]:
        rollouts = [TrainRollout(prompt, policy.encode(t), t, r, 0) for t, r in zip(texts, rewards, strict=True)]
        couple_group(rollouts, group_sigmas(policy, credit, estimator, prompt, rollouts, PROBLEM), credit)
        assert all(len(r.segments) >= 2 for r in rollouts)
        return [r.token_advantages for r in rollouts]

    for tokens, baseline in zip(advantages(FlatValues(estimators.get("rredcot")())), grpo, strict=True):
        assert tokens == pytest.approx(np.full(len(tokens), baseline), abs=1e-9)
    real = advantages(estimators.get("rredcot")())
    assert max(float(np.abs(t - b).max()) for t, b in zip(real, grpo, strict=True)) > 1e-5  # 2e-4 here


def test_advantages_from_sigmas_groups_by_prompt_and_couples_without_trl():
    """The TRL plug-in's core, pure: rows from every process (in any order) grouped by index // group size, each
    group coupled as ``couple_group`` couples real rollouts."""
    from rredcot_viz.training.credit import CreditedRow, advantages_from_sigmas, couple_group
    from rredcot_viz.training.rollouts import TrainRollout

    credit = CreditConfig()
    rows = [
        CreditedRow(0, (0.2, 0.8), ((0, 2), (2, 4)), 1.0, 4),
        CreditedRow(1, (-0.3, 0.3), ((0, 3), (3, 5)), 0.0, 5),
        CreditedRow(3, (0.5, 0.5), ((0, 1), (1, 2)), 1.0, 2),
        CreditedRow(2, (0.1, -0.1), ((0, 2), (2, 3)), 0.0, 3),
    ]
    found = advantages_from_sigmas(rows, 2, credit)
    assert sorted(found) == [0, 1, 2, 3]
    for group in ((0, 1), (2, 3)):
        members = [next(r for r in rows if r.index == i) for i in group]
        real = [TrainRollout([], [0] * r.tokens, "", r.reward, 0, segments=list(r.segments)) for r in members]
        couple_group(real, [np.array(r.sigmas) for r in members], credit)
        for row, rollout in zip(members, real, strict=True):
            assert found[row.index].segments == rollout.segment_advantages
            assert np.array_equal(found[row.index].tokens, rollout.token_advantages)
    assert found[0].segments[0] > 0 > found[1].segments[0]  # a correct rollout up, a failed one down
    assert len(found[1].tokens) == 5
