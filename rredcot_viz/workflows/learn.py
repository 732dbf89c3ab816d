"""A tiny tree-shaped reasoning MDP for teaching delayed reward and its redistribution (the Learn page).

A chain of K steps: at step t the policy writes a sound step with probability ``p[t]``, otherwise a flawed
one. From a flawed state the chain can still end correct with probability ``recover``; a fully sound chain
ends correct. The true value of a state is therefore

    V(sound prefix before step t) = P_t + (1 - P_t) * recover,   P_t = prod_{j >= t} p[j]
    V(flawed prefix)              = recover

and the optimal (RUDDER) redistribution of one trajectory is the difference of consecutive true values,
with the terminal value the observed outcome R. The page compares it with what GRPO assigns (the outcome
spread evenly), with Monte Carlo estimates from n rollouts per state, and with RREDCoT-style estimates:
an "answer now" probability R-hat plus the likelihood of the reference path v-hat (a point proposal, which
ignores the recovery paths and so never overestimates V). Their sum Q-hat counts overlapping chances of
success and can exceed V; ``reading_notes`` says in words what the chosen settings show, so the page's text
never claims what its numbers do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.redistribution import redistribute


@dataclass(frozen=True)
class ChainMDP:
    p: tuple[float, ...]  # per-step probability of a sound step
    recover: float = 0.0  # probability that a flawed chain still ends correct

    def __post_init__(self) -> None:
        if not self.p or any(not 0 <= q <= 1 for q in self.p) or not 0 <= self.recover <= 1:
            raise ConfigError("step probabilities and the recovery probability must lie in [0, 1]")

    @property
    def k(self) -> int:
        return len(self.p)

    def sound_tail(self, t: int) -> float:
        """Probability that steps t..K (0-based t) are all sound."""
        return float(np.prod(self.p[t:]))

    def value(self, t: int, flawed: bool) -> float:
        """True value of the state before 0-based step t (t = K: the complete chain)."""
        if flawed:
            return self.recover
        tail = self.sound_tail(t)
        return tail + (1 - tail) * self.recover


@dataclass(frozen=True)
class Trajectory:
    """A chain whose first flawed step is ``first_error`` (0-based; None = all sound) and its outcome."""

    k: int
    first_error: int | None
    outcome: float

    def flawed_before(self, t: int) -> bool:
        return self.first_error is not None and self.first_error < t


def true_values(mdp: ChainMDP, trajectory: Trajectory) -> np.ndarray:
    """V(s_1..s_K) from the MDP and V(s_{K+1}) := R, the observed outcome."""
    values = [mdp.value(t, trajectory.flawed_before(t)) for t in range(mdp.k)]
    return np.array([*values, trajectory.outcome])


def optimal_redistribution(mdp: ChainMDP, trajectory: Trajectory) -> np.ndarray:
    """sigma*_t = V(s_{t+1}) - V(s_t): the expected future reward after every step is then zero."""
    return redistribute(true_values(mdp, trajectory), "difference")


def grpo_credit(trajectory: Trajectory) -> np.ndarray:
    """What outcome-only GRPO gives each step: the outcome spread evenly (sum R)."""
    return np.full(trajectory.k, trajectory.outcome / trajectory.k)


def monte_carlo_values(mdp: ChainMDP, trajectory: Trajectory, n: int, rng: np.random.Generator) -> np.ndarray:
    """V-hat(s_1..s_K) from n simulated rollouts per state, V-hat(s_{K+1}) := R."""
    estimates = []
    for t in range(mdp.k):
        if trajectory.flawed_before(t):
            successes = rng.random(n) < mdp.recover
        else:
            sound = np.all(rng.random((n, mdp.k - t)) < np.asarray(mdp.p[t:]), axis=1)
            successes = sound | (rng.random(n) < mdp.recover)
        estimates.append(successes.mean())
    return np.array([*estimates, trajectory.outcome])


def monte_carlo_spread(
    mdp: ChainMDP, trajectory: Trajectory, n: int, repeats: int = 300, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of sigma^MC over ``repeats`` independent n-rollout estimates."""
    rng = np.random.default_rng(seed)
    sigmas = np.array([redistribute(monte_carlo_values(mdp, trajectory, n, rng), "difference") for _ in range(repeats)])
    return sigmas.mean(axis=0), sigmas.std(axis=0)


def rredcot_values(mdp: ChainMDP, trajectory: Trajectory, answer_skill: float) -> dict[str, np.ndarray]:
    """RREDCoT-style estimates: R-hat_t = answer_skill * (sound steps so far / K) for a sound prefix (0 once
    flawed), v-hat_t = likelihood of the reference path (all remaining steps sound; 0 from a flawed state),
    Q-hat = R-hat + v-hat, Q-hat_{K+1} := R."""
    r_hat = np.array([0.0 if trajectory.flawed_before(t) else answer_skill * t / mdp.k for t in range(mdp.k)])
    v_hat = np.array([0.0 if trajectory.flawed_before(t) else mdp.sound_tail(t) for t in range(mdp.k)])
    q_hat = np.append(r_hat + v_hat, trajectory.outcome)
    return {"R_hat": r_hat, "v_hat": v_hat, "Q_hat": q_hat}


def reading_notes(
    true_v: np.ndarray, estimates: dict[str, np.ndarray], errors: dict[str, list], rredcot: str, grpo: str
) -> list[str]:
    """What the figures show at these settings, computed from them: where Q-hat overshoots the true V, that
    v-hat alone never does, and whether RREDCoT-style credit beats GRPO's."""
    k = len(estimates["v_hat"])
    notes = []
    over = [t for t in range(k) if estimates["Q_hat"][t] > true_v[t] + 1e-9]
    if over:
        worst = max(over, key=lambda t: estimates["Q_hat"][t] - true_v[t])
        states = ", ".join(f"s{t + 1}" for t in over)
        notes.append(
            f"Q̂ = R̂ + v̂ exceeds the true V at {states} (s{worst + 1}: {estimates['Q_hat'][worst]:.2f} vs "
            f"{true_v[worst]:.2f}): R̂ and v̂ count overlapping chances of success. Only Q̂'s differences "
            "become credit, so an overshoot that grows along the chain adds credit to every step."
        )
    if all(estimates["v_hat"][t] <= true_v[t] + 1e-9 for t in range(k)):
        notes.append("v̂ alone never exceeds the true V here: it counts only the reference path.")
    error = dict(zip(errors["method"], errors["mean |error| vs optimal"], strict=True))
    ours, theirs = error[rredcot], error[grpo]
    verdict = "below" if ours < theirs else "above"
    notes.append(
        f"RREDCoT-style credit errs by {ours:.4f} per step on average, {verdict} GRPO's {theirs:.4f}"
        + ("." if ours < theirs else ": R̂'s ramp adds the same credit to every step on top of v̂'s differences.")
    )
    return notes


RREDCOT_STYLE, GRPO_UNIFORM = "RREDCoT-style", "GRPO (uniform)"


@dataclass
class Lesson:
    """What the Learn page shows for one setting of its sliders, each series under the label it is shown with."""

    values: dict[str, np.ndarray]  # the partial chains' values: true V, RREDCoT's Q-hat, v-hat alone
    credits: dict[str, np.ndarray]  # credit per step: optimal sigma*, Monte Carlo's mean, RREDCoT-style, GRPO
    errors: dict[str, list]  # ``credit_errors``: each method against the optimal redistribution
    notes: list[str]  # ``reading_notes``: what these numbers show, in words


def lesson(
    p: tuple[float, ...],
    recover: float,
    first_error: int | None,
    outcome: float,
    rollouts: int,
    answer_skill: float,
    repeats: int = 300,
    seed: int = 0,
) -> Lesson:
    """The toy chain with step probabilities ``p`` and ``recover``, one trajectory (its first flawed step, 0-based
    or None, and outcome), and every method's values and credit: the exact optimum, Monte Carlo with
    ``rollouts`` per state (mean and spread over ``repeats``), RREDCoT-style estimates and GRPO."""
    mdp = ChainMDP(p, recover)
    trajectory = Trajectory(mdp.k, first_error, outcome)
    exact = optimal_redistribution(mdp, trajectory)
    mc_mean, mc_std = monte_carlo_spread(mdp, trajectory, rollouts, repeats=repeats, seed=seed)
    estimates = rredcot_values(mdp, trajectory, answer_skill)
    sigma = redistribute(estimates["Q_hat"], "difference")
    grpo = grpo_credit(trajectory)
    true_v = true_values(mdp, trajectory)
    mc_name = f"Monte Carlo, n={rollouts}"
    errors = credit_errors(
        exact, {GRPO_UNIFORM: grpo, mc_name: mc_mean, RREDCOT_STYLE: sigma}, mc_name, mc_std, rollouts
    )
    return Lesson(
        values={
            "true V": true_v,
            "RREDCoT Q̂ = R̂ + v̂": estimates["Q_hat"],
            "v̂ (reference path)": np.append(estimates["v_hat"], outcome),
        },
        credits={"optimal σ*": exact, f"MC (n={rollouts}), mean": mc_mean, RREDCOT_STYLE: sigma, "GRPO": grpo},
        errors=errors,
        notes=reading_notes(true_v, estimates, errors, RREDCOT_STYLE, GRPO_UNIFORM),
    )


def credit_errors(
    exact: np.ndarray, credits: dict[str, np.ndarray], mc_name: str, mc_std: np.ndarray, n: int
) -> dict[str, list]:
    """Per method: mean |credit - optimal sigma*|, its sampling noise (Monte Carlo only) and the model samples
    it needs (n per state for Monte Carlo, none for the others): the Learn page's comparison table."""
    k = len(exact)
    return {
        "method": list(credits),
        "mean |error| vs optimal": [float(np.abs(np.asarray(c) - exact).mean()) for c in credits.values()],
        "noise (std over repeats)": [float(mc_std.mean()) if name == mc_name else 0.0 for name in credits],
        "model samples needed": [n * k if name == mc_name else 0 for name in credits],
    }


# Headline results from docs/method.md §10, shown with their caveats (None = not available, never zero).
RREDCOT_LONG_CONTEXT = {
    "columns": ["Benchmark", "GRPO", "RREDCoT"],
    "rows": [
        ["AIME24", 0.850, 0.908],
        ["AIME25", 0.600, 0.583],
        ["AIME26", 0.442, 0.475],
        ["Minerva", 0.915, 0.935],
        ["MATH500", 0.804, 0.823],
    ],
    "caveat": "Qwen3-4B on Numina-CoT, generations up to 25k tokens; metric and sample count not available, "
    "values near 0.9 on AIME24 are unusual for pass@1 with a 4B model: shown as reported.",
}
SRPO_MAIN = {
    "columns": ["Model", "Method", "Olympiads", "HMMT Nov", "MATH L5", "StrategyQA", "CSQA", "Physics"],
    "rows": [
        ["Qwen2.5-14B", "Base", "26.0", "6.7", "51.0", "71.4", "65.8", "26.6"],
        ["Qwen2.5-14B", "GRPO", "25.0 ± 1.5", "5.6 ± 1.6", "52.1 ± 1.2", "69.5 ± 2.8", "66.1 ± 16.7", "26.9 ± 6.8"],
        ["Qwen2.5-14B", "SCoRe", "25.3 ± 1.1", "5.6 ± 1.6", "54.1 ± 0.5", "72.0 ± 0.5", "78.0 ± 1.7", "29.5 ± 4.1"],
        [
            "Qwen2.5-14B",
            "Critique-GRPO",
            "24.9 ± 0.7",
            "7.8 ± 1.6",
            "51.1 ± 0.2",
            "72.1 ± 0.4",
            "66.8 ± 0.7",
            "24.9 ± 1.2",
        ],
        ["Qwen2.5-14B", "RRPO", "25.7 ± 0.9", "7.8 ± 1.6", "52.7 ± 1.2", "69.6 ± 3.9", "77.7 ± 2.3", "39.8 ± 13.0"],
        ["Qwen2.5-14B", "SRPO", "25.5 ± 1.2", "6.7 ± 2.7", "55.2 ± 0.7", "74.9 ± 0.2", "80.6 ± 0.9", "45.5 ± 11.8"],
        ["OLMo-3-7B", "Base", "23.2", "10.0", "56.8", "55.0", "72.2", "45.4"],
        ["OLMo-3-7B", "GRPO", "26.6 ± 0.2", "11.1 ± 5.7", "67.1 ± 1.2", "62.0 ± 4.6", "72.3 ± 0.6", "42.3 ± 5.4"],
        ["OLMo-3-7B", "RRPO", "26.1 ± 0.9", "10.0 ± 4.7", "66.2 ± 6.0", "68.1 ± 0.1", "56.9 ± 25.7", "33.9 ± 12.1"],
        ["OLMo-3-7B", "SRPO", "24.8 ± 1.9", "15.6 ± 4.2", "67.5 ± 3.5", "66.6 ± 2.5", "74.8 ± 1.0", "54.5 ± 2.0"],
        ["OLMo-3-7B", "SCoRe / Critique-GRPO / SPO-Tree", None, None, None, None, None, None],
    ],
    "caveat": "Accuracy %, mean ± std over 3 seeds, 6 of 10 benchmarks (arXiv 2605.25507). Rows and columns the "
    "paper does not publish are shown as missing, not as zero.",
}
