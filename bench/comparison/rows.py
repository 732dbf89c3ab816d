"""The compare bench's rows (estimators, attributions, Monte Carlo budgets, controls) and one trace's result."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rredcot_viz.estimators.rredcot import RREDCoTConfig
from rredcot_viz.traces.trace import Trace

REFERENCE_N = 16
MC_NS = (1, 2, 4)  # drawn after the reference's 16, so independent of it
PROPOSALS = ("remaining", "whole")
PATH_AGGREGATIONS = ("geo_mean", "seq_prob", "mean_prob")
CONTROLS = ("last_segment", "position", "reverse_position", "random")
ATTRIBUTIONS = ("loo", "shapley", "grad_x_input", "attention")
SPLITS = ("selection", "evaluation")
# what must match for a resumed run to add traces to a saved one
PROTOCOL = ("seed", "exclude_seed", "split_seed", "screen", "min_lines", "segmenter", "k", "mc_max_tokens", "sampler",
            "model", "quantization", "problems_from", "rows")  # fmt: skip
# a protocol saved before --sampler existed sampled locally; before the grader read the state, MC graded the rollout;
# before --model and --rows, every run was the embedded model in full precision on built-in problems, every row
SAVED_BEFORE = {"sampler": "local", "grading": "rollout", "model": "embedded", "quantization": "none",
                "problems_from": "builtin", "rows": "full"}  # fmt: skip
ROW_SETS = ("full", "issue42")
LEAN_ESTIMATORS = ("rredcot", "answer_only", "v_hat[whole,geo_mean]")  # Q-hat at its defaults, R-hat, its v-hat
LEAN_ATTRIBUTIONS = ("loo",)
LEAN_MC_NS = (1, 2)
PROBLEM_SOURCES = ("builtin", "gsm8k")
GSM8K_FILE = ("gsm8k", "test.jsonl")


def mc_ns(rows: str) -> tuple[int, ...]:
    """The Monte Carlo budgets scored beside the reference (drawn after its 16 rollouts, so independent of it)."""
    return LEAN_MC_NS if rows == "issue42" else MC_NS


def estimator_rows(rows_set: str = "full") -> dict[str, tuple[str, dict]]:
    """Row name -> (estimator, options): Q-hat per v-hat setting, R-hat alone, v-hat alone (``issue42``: Q-hat at
    its defaults, R-hat alone and the default's own v-hat alone)."""
    rows: dict[str, tuple[str, dict]] = {"rredcot": ("rredcot", {})}  # the defaults
    default = RREDCoTConfig()
    for proposal in PROPOSALS:
        for aggregation in PATH_AGGREGATIONS:
            if (proposal, aggregation) != (default.path_proposal, default.path_aggregation):
                rows[f"rredcot[{proposal},{aggregation}]"] = (
                    "rredcot",
                    {"path_proposal": proposal, "path_aggregation": aggregation},
                )
    rows["answer_only"] = ("answer_only", {})
    rows["answer_only[mean_prob]"] = ("answer_only", {"aggregation": "mean_prob"})
    for proposal in PROPOSALS:
        for aggregation in PATH_AGGREGATIONS:
            rows[f"v_hat[{proposal},{aggregation}]"] = (
                "rredcot",
                {"alpha": 0.0, "path_proposal": proposal, "path_aggregation": aggregation},
            )
    return {name: rows[name] for name in LEAN_ESTIMATORS} if rows_set == "issue42" else rows


def attribution_rows(rows_set: str = "full") -> dict[str, tuple[str, dict]]:
    """Row name -> (attribution, options): the default target (the trace's own answer) and the reference
    (``issue42``: LOO with its default target only)."""
    rows: dict[str, tuple[str, dict]] = {}
    for name in ATTRIBUTIONS:
        rows[name] = (name, {})
        rows[f"{name}[reference]"] = (name, {"target": "reference"})
    return {name: rows[name] for name in LEAN_ATTRIBUTIONS} if rows_set == "issue42" else rows


@dataclass
class TraceResult:
    trace: Trace
    problem: int
    split: str
    k: int
    reference: np.ndarray  # MC(16) sigma
    reference_values: np.ndarray
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    tokens: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    truncated: int = 0
    rollouts: int = 0
    outcomes: list[str] = field(default_factory=list)  # per non-final state, every rollout: 1 right, 0 wrong, t cap
    wall_seconds: float = 0.0  # the trace's own seconds: its states' sampling and its rows (over every sitting)

    @property
    def usable(self) -> bool:
        return bool(self.scores)


def default_row() -> str:
    """The ablation row that the 'rredcot' row (the estimator's defaults) equals."""
    default = RREDCoTConfig()
    return f"rredcot[{default.path_proposal},{default.path_aggregation}]"
