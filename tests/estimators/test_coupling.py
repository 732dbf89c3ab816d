"""GRPO and redistributed advantages against METHOD.md §5 and §9.3."""

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
    grpo = segment_advantages(sigmas, rewards, mode="a", lam=0.0)
    np.testing.assert_allclose(grpo[0], [1, 1]) and np.testing.assert_allclose(grpo[1], [-1, -1])
    half = segment_advantages(sigmas, rewards, mode="a", lam=0.5)
    full = segment_advantages(sigmas, rewards, mode="a", lam=1.0)
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
