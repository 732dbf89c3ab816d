"""How far to trust a comparison with Monte Carlo on one trace, in words a newcomer reads.

A method's agreement with MC means little alone: MC is itself noisy, and with a few rollouts per state two
independent MC runs order the same segments differently. So each method's pairwise-order agreement with MC
(``agreement.pair_order`` over the segments before the last, whose credit the outcome decides) is shown beside
MC's agreement with itself: two disjoint halves of its rollouts (``agreement.halves_pair_order``). That
self-agreement is the ceiling: a method cannot be expected to match MC better than MC matches itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rredcot_viz.attribution.agreement import halves_pair_order, pair_order
from rredcot_viz.types import StateValues

HALVES = ("V_half_a", "V_half_b")  # Monte Carlo's value components from two disjoint halves of its rollouts


@dataclass(frozen=True)
class Trust:
    reference: str  # the Monte Carlo method's name
    rollouts: int  # rollouts per state the reference drew (its halves have half as many)
    pairs: int  # the segment pairs (before the last segment) that the reference orders
    methods: dict[str, float]  # method -> how many of those pairs it orders as the reference does (ties: one half)
    itself: float | None  # the share of pairs MC's two halves order alike; None when a half orders no pair

    def sentences(self, labels: dict[str, str] | None = None) -> list[str]:
        """One line per method, then MC's own line: "RREDCoT orders 4 of 10 segment pairs as Monte Carlo does"."""
        labels = labels or {}
        lines = []
        for name, agreeing in self.methods.items():
            label = labels.get(name, name)
            if self.pairs == 0:
                lines.append(f"{label}: Monte Carlo ranks no two segments apart on this trace, so nothing to check.")
            else:
                lines.append(f"{label} orders {_count(agreeing)} of {self.pairs} segment pairs as Monte Carlo does "
                             f"({agreeing / self.pairs:.0%}; ordering at random gets 50%).")  # fmt: skip
        if self.itself is None:
            lines.append(
                f"Monte Carlo's agreement with itself is unknown here: with {self.rollouts} rollouts a state, one "
                "half of them ranks no two segments apart. Draw more rollouts to see how far MC can be trusted."
            )
        else:
            about = f" (about {round(self.itself * self.pairs)} of {self.pairs})" if self.pairs else ""
            lines.append(
                f"Monte Carlo agrees with itself on {self.itself:.0%} of segment pairs{about}: two independent "
                f"halves of its {self.rollouts} rollouts a state, so no method can be expected to match it much "
                "better than that."
            )
        return lines


def _count(value: float) -> str:
    """A pair count as read: whole numbers plain, halves (ties count one half) with one decimal."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def trust(
    scores: dict[str, np.ndarray], reference: str, components: dict[str, np.ndarray], rollouts: int
) -> Trust | None:
    """Every other method's agreement with the reference's sigma, and the reference's with itself; None when the
    reference has no halves (not Monte Carlo, or fewer than two rollouts a state)."""
    if not all(name in components for name in HALVES) or rollouts < 2:
        return None
    mc = np.asarray(scores[reference], dtype=float)
    methods = {name: pair_order(values, mc, final=False)[0] for name, values in scores.items() if name != reference}
    itself = halves_pair_order(*(components[name] for name in HALVES))
    pairs = pair_order(mc, mc, final=False)[1]
    return Trust(reference, rollouts, pairs, methods, None if itself is None else itself[0] / itself[1])


def own_trust(values: StateValues, sigma: np.ndarray) -> Trust | None:
    """Monte Carlo's agreement with itself for one estimator's result (Inspect); None for any other estimator."""
    return trust({values.estimator: sigma}, values.estimator, values.components, rollouts_per_state(values.components))


def rollouts_per_state(components: dict[str, np.ndarray]) -> int:
    """The rollouts Monte Carlo used at its first state (0 for an estimator that does not sample)."""
    return int(components["rollouts"][0]) if "rollouts" in components else 0


def probed_trust(evidence: dict) -> Trust | None:
    """Monte Carlo's agreement with itself from a first-error detector's probes (``mc_first_error`` evidence),
    when it probed every state; None when it probed fewer (a binary search skips states)."""
    halves = evidence.get("half_values") or []
    if not halves or any(h is None for h in halves):
        return None
    values = np.array(evidence["values"], dtype=float)
    components = {HALVES[0]: np.array([h[0] for h in halves]), HALVES[1]: np.array([h[1] for h in halves])}
    return trust({"mc": np.diff(values)}, "mc", components, int(evidence.get("rollouts", 0)))
