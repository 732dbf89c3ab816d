"""GRPO and redistributed advantages against docs/method.md §5 and §9.3."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rredcot_viz.estimators.coupling import grpo_advantages, segment_advantages, token_advantages


def test_grpo_worked_examples():
    np.testing.assert_allclose(grpo_advantages(np.array([1, 0, 1, 0])), [1, -1, 1, -1], atol=1e-12)
    np.testing.assert_allclose(
        grpo_advantages(np.array([1, 0, 0, 0])), [1.7320508, -0.5773503, -0.5773503, -0.5773503], atol=1e-6
    )
    assert not grpo_advantages(np.array([1, 1, 1, 1])).any() and not grpo_advantages(np.array([0, 0, 0, 0])).any()
    # TRL: unbiased std (0.57735) + 1e-4
    np.testing.assert_allclose(
        grpo_advantages(np.array([1, 0, 1, 0]), "trl"),
        np.array([1, -1, 1, -1]) * 0.5 / (np.std([1, 0, 1, 0], ddof=1) + 1e-4),
    )


def test_mode_a_normalises_over_all_segments_of_the_group():
    sigmas = [np.array([0.1, 0.9]), np.array([0.0, -0.2, 0.2])]
    pooled = np.array([0.1, 0.9, 0.0, -0.2, 0.2])
    got = segment_advantages(sigmas, np.array([1.0, 0.0]), mode="a")
    expected = (pooled - pooled.mean()) / (pooled.std() + 1e-8)
    np.testing.assert_allclose(np.concatenate(got), expected, atol=1e-12)


def test_mode_b_is_reward_to_go_of_the_normalised_sigma():
    sigmas = [np.array([0.1, 0.9]), np.array([0.0, -0.2, 0.2])]
    a = segment_advantages(sigmas, np.array([1.0, 0.0]), mode="a")
    b = segment_advantages(sigmas, np.array([1.0, 0.0]), mode="b")
    np.testing.assert_allclose(b[0], [a[0][0] + a[0][1], a[0][1]], atol=1e-12)
    np.testing.assert_allclose(b[1], [a[1].sum(), a[1][1] + a[1][2], a[1][2]], atol=1e-12)


def test_mode_c_weights_grpo_by_sigma_magnitude():
    sigmas = [np.array([0.2, 0.6]), np.array([0.0, 0.0])]
    got = segment_advantages(sigmas, np.array([1.0, 0.0]), mode="c")
    # rewards [1, 0]: GRPO [+1, -1]; weights |sigma| / mean |sigma| = [0.5, 1.5]; all-zero sigma -> w = 1
    np.testing.assert_allclose(got[0], [0.5, 1.5], atol=1e-7)
    np.testing.assert_allclose(got[1], [-1.0, -1.0], atol=1e-12)


def test_lambda_mixes_with_grpo():
    sigmas = [np.array([0.1, 0.9]), np.array([0.5, -0.5])]
    rewards = np.array([1.0, 0.0])
    grpo = segment_advantages(sigmas, rewards, mode="a", coupling_lambda=0.0)
    np.testing.assert_allclose(grpo[0], [1, 1])
    np.testing.assert_allclose(grpo[1], [-1, -1])
    half = segment_advantages(sigmas, rewards, mode="a", coupling_lambda=0.5)
    full = segment_advantages(sigmas, rewards, mode="a", coupling_lambda=1.0)
    np.testing.assert_allclose(half[0], 0.5 * full[0] + 0.5)


@given(st.lists(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=6), min_size=2, max_size=6))
def test_mode_a_advantages_have_zero_mean(sigma_lists):
    sigmas = [np.array(s) for s in sigma_lists]
    rewards = np.arange(len(sigmas)) % 2
    pooled = np.concatenate(segment_advantages(sigmas, rewards, mode="a"))
    assert abs(pooled.mean()) < 1e-6


def test_token_advantages_fill_segments_and_the_answer_tail():
    spans = [(0, 3), (3, 5)]
    np.testing.assert_allclose(token_advantages(np.array([0.2, -0.4]), spans, 7, 1.0, "a"), [0.2] * 3 + [-0.4] * 4)
    np.testing.assert_allclose(
        token_advantages(np.array([0.2, -0.4]), spans, 7, 1.0, "c"), [0.2] * 3 + [-0.4] * 2 + [1.0] * 2
    )


# ---------------------------------------------------------------- value_baseline invariants (docs/method.md §5)
def _sigma(values: list[float], reward: float) -> np.ndarray:
    """exact_sum sigma of a Q-hat curve (values at s_1..s_K) ending in outcome ``reward``."""
    from rredcot_viz.estimators.redistribution import redistribute

    return redistribute(np.array([*values, reward]), "exact_sum")


def test_value_baseline_equal_rewards_give_zero():
    sigmas = [_sigma([0.1, 0.5], 1.0), _sigma([0.3, 0.2], 1.0)]
    for advantages in segment_advantages(sigmas, np.array([1.0, 1.0]), "value_baseline"):
        assert not advantages.any()


def test_flat_estimator_or_lambda_zero_is_grpo_exactly():
    mode = "value_baseline"
    rewards = np.array([1.0, 0.0, 0.0, 1.0])
    flat = [_sigma([0.4, 0.4, 0.4], r) for r in rewards]
    grpo = grpo_advantages(rewards)
    for advantages, expected in zip(segment_advantages(flat, rewards, mode), grpo, strict=True):
        np.testing.assert_allclose(advantages, expected, atol=1e-12)
    informative = [
        _sigma([0.1, 0.6, 0.9], 1.0),
        _sigma([0.5, 0.2, 0.1], 0.0),
        _sigma([0.3, 0.3, 0.3], 0.0),
        _sigma([0.2, 0.2, 0.8], 1.0),
    ]
    for advantages, expected in zip(
        segment_advantages(informative, rewards, mode, coupling_lambda=0.0), grpo, strict=True
    ):
        np.testing.assert_allclose(advantages, expected, atol=1e-12)


def test_value_baseline_signs_follow_the_outcome():
    rewards = np.array([1.0, 0.0, 0.0, 1.0])
    sigmas = [
        _sigma([0.1, 0.6, 0.9], 1.0),
        _sigma([0.5, 0.9, 0.1], 0.0),
        _sigma([0.3, 0.3, 0.3], 0.0),
        _sigma([0.9, 0.2, 0.8], 1.0),
    ]
    per_segment = segment_advantages(sigmas, rewards, "value_baseline")
    for advantages, reward in zip(per_segment, rewards, strict=True):
        assert (advantages >= 0).all() if reward == 1 else (advantages <= 0).all()
    # most credit before the value rose: the correct rollout's first segment (V = 0.5) beats its last (V = 1)
    assert per_segment[0][0] > per_segment[0][2] >= 0
    # mode a breaks it: a correct rollout whose estimate is flat until the answer gets negative working credit
    flat_correct = [_sigma([0.0, 0.0, 0.0], 1.0), _sigma([0.0, 0.0, 0.0], 0.0)]
    assert segment_advantages(flat_correct, np.array([1.0, 0.0]), "a")[0][0] < 0


def test_value_baseline_follows_the_decisive_segment_on_a_toy_mdp():
    """Exact values: the correct rollout's value jumps from 0.5 to 1 in segment 2 (the decisive one) and stays.
    gae_lambda 1: segments up to the decisive one get more than those after it; 0: the decisive one the most."""
    rewards = np.array([1.0, 0.0])
    correct, failed = _sigma([0.5, 0.5, 1.0, 1.0], 1.0), _sigma([0.5, 0.5, 0.0, 0.0], 0.0)
    full = segment_advantages([correct, failed], rewards, "value_baseline", gae_lambda=1.0)[0]
    assert min(full[:2]) > max(full[2:])
    one_step = segment_advantages([correct, failed], rewards, "value_baseline", gae_lambda=0.0)[0]
    assert int(np.argmax(one_step)) == 1 and one_step[1] > 0
    np.testing.assert_allclose(one_step, [0.0, 1.0, 0.0, 0.0], atol=1e-12)  # delta 0.5 / std 0.5
