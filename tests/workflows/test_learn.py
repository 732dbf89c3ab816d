"""The Learn page's chain MDP: exact values, optimal redistribution, GRPO, MC and RREDCoT-style estimates."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.workflows.learn import (
    ChainMDP,
    Trajectory,
    credit_errors,
    grpo_credit,
    lesson,
    monte_carlo_spread,
    optimal_redistribution,
    reading_notes,
    rredcot_values,
    true_values,
)

MDP = ChainMDP(p=(0.9, 0.5, 0.8), recover=0.1)


def test_true_values_by_hand():
    sound = Trajectory(3, None, 1.0)
    # V(s1) = 0.36 + 0.64 * 0.1; V(s2) = 0.4 + 0.6 * 0.1; V(s3) = 0.8 + 0.2 * 0.1; V(s4) = R
    np.testing.assert_allclose(true_values(MDP, sound), [0.424, 0.46, 0.82, 1.0], atol=1e-12)
    flawed = Trajectory(3, 1, 0.0)  # the second step is flawed
    np.testing.assert_allclose(true_values(MDP, flawed), [0.424, 0.46, 0.1, 0.0], atol=1e-12)


def test_optimal_redistribution_blames_the_flawed_step():
    sigma = optimal_redistribution(MDP, Trajectory(3, 1, 0.0))
    np.testing.assert_allclose(sigma, [0.036, -0.36, -0.1], atol=1e-12)
    assert int(np.argmin(sigma)) == 1
    assert sigma.sum() == pytest.approx(0.0 - 0.424)  # R - V(s_1): the prior goes to no step


def test_grpo_spreads_the_outcome():
    np.testing.assert_allclose(grpo_credit(Trajectory(3, None, 1.0)), [1 / 3] * 3)
    assert not grpo_credit(Trajectory(3, 0, 0.0)).any()  # a failure blames nothing in particular


def test_monte_carlo_is_unbiased_and_shrinks_with_n():
    trajectory = Trajectory(3, 1, 0.0)
    exact = optimal_redistribution(MDP, trajectory)
    mean8, spread8 = monte_carlo_spread(MDP, trajectory, n=8, repeats=2000, seed=1)
    mean64, spread64 = monte_carlo_spread(MDP, trajectory, n=64, repeats=2000, seed=1)
    np.testing.assert_allclose(mean64, exact, atol=0.02)
    np.testing.assert_allclose(mean8, exact, atol=0.04)
    assert (spread64 < spread8 / 2).all()


def test_rredcot_style_values_never_overestimate_the_continuation():
    trajectory = Trajectory(3, None, 1.0)
    estimates = rredcot_values(MDP, trajectory, answer_skill=0.3)
    np.testing.assert_allclose(estimates["v_hat"], [0.36, 0.4, 0.8], atol=1e-12)
    assert (estimates["v_hat"] <= true_values(MDP, trajectory)[:3] + 1e-12).all()  # non-positive bias
    np.testing.assert_allclose(estimates["R_hat"], [0.0, 0.1, 0.2], atol=1e-12)
    assert estimates["Q_hat"][-1] == 1.0


def test_bad_settings_are_refused():
    with pytest.raises(ConfigError, match="must lie in"):
        ChainMDP(p=(1.2,))


def test_credit_errors_by_hand():
    exact = np.array([0.5, -0.5])
    credits = {"grpo": np.array([0.0, 0.0]), "mc": np.array([0.25, -0.25]), "rredcot": np.array([0.5, -0.5])}
    table = credit_errors(exact, credits, "mc", np.array([0.1, 0.3]), n=4)
    assert table["method"] == ["grpo", "mc", "rredcot"]
    assert table["mean |error| vs optimal"] == pytest.approx([0.5, 0.25, 0.0])
    assert table["noise (std over repeats)"] == pytest.approx([0.0, 0.2, 0.0])
    assert table["model samples needed"] == [0, 8, 0]


def test_reading_notes_say_what_the_numbers_show():
    mdp, sound = ChainMDP((0.8,) * 4, 0.05), Trajectory(4, None, 1.0)
    exact, grpo = optimal_redistribution(mdp, sound), grpo_credit(sound)
    for skill, q_top, ours, better in ((0.3, "1.02", "0.1149", False), (0.1, "0.88", "0.0399", True)):
        estimates = rredcot_values(mdp, sound, skill)
        credits = {"GRPO (uniform)": grpo, "RREDCoT-style": redistribute(estimates["Q_hat"], "difference")}
        table = credit_errors(exact, credits, "mc", np.zeros(4), n=4)
        notes = reading_notes(true_values(mdp, sound), estimates, table, "RREDCoT-style", "GRPO (uniform)")
        assert f"exceeds the true V at s2, s3, s4 (s4: {q_top} vs 0.81)" in notes[0]
        assert notes[1] == "v̂ alone never exceeds the true V here: it counts only the reference path."
        assert f"errs by {ours} per step on average, {'below' if better else 'above'} GRPO's 0.1098" in notes[2]


def test_a_lesson_is_every_method_on_one_trajectory():
    shown = lesson(MDP.p, MDP.recover, first_error=1, outcome=0.0, rollouts=4, answer_skill=0.1, repeats=50)
    trajectory = Trajectory(3, 1, 0.0)
    np.testing.assert_allclose(shown.values["true V"], true_values(MDP, trajectory))
    np.testing.assert_allclose(shown.credits["optimal σ*"], optimal_redistribution(MDP, trajectory))
    np.testing.assert_allclose(shown.credits["GRPO"], [0.0, 0.0, 0.0])
    assert shown.values["v̂ (reference path)"][-1] == 0.0  # the outcome closes every curve
    assert shown.errors["method"] == ["GRPO (uniform)", "Monte Carlo, n=4", "RREDCoT-style"]
    assert shown.errors["model samples needed"] == [0, 12, 0]
    assert shown.notes[-1].startswith("RREDCoT-style credit errs by")
