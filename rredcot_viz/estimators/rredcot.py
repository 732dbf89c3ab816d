"""RREDCoT's no-generation estimators (METHOD.md §3, arXiv 2606.06475).

- R-hat_t: the probability of the reference answer right after s_t plus an answer trigger
  (``s_t ‖ trigger ‖ Y* ‖ "}"``, scoring ``Y* ‖ "}"``), aggregated per ``aggregation``;
- v-hat_t: the importance-sampling estimate over the reference path with a point proposal, i.e. the
  length-normalised likelihood of P* after ``s_t ‖ "\\n\\n"``; extra reference paths widen the proposal
  (the maximum of the normalised scores, so it can only rise as references are added);
- Q-hat_t = alpha R-hat_t + beta v-hat_t, with Q-hat_{K+1} := R (the observed outcome).

``answer_only`` (alpha=1, beta=0) and ``continue_only`` (alpha=0, beta=1) are the ablations. The non-positive
bias of v-hat holds for the unnormalised estimator only; once length-normalised it is a guide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.errors import ConfigError, MissingReferenceError
from rredcot_viz.estimators.aggregation import CANDIDATE_NORMALIZED, aggregations, candidate_normalized
from rredcot_viz.estimators.base import EstimatorConfig, ScoreSeries, StateValues, ValueEstimator, estimators
from rredcot_viz.traces.answers import answers_equivalent, numbers_in

if TYPE_CHECKING:
    from rredcot_viz.engine.context import TraceContext
    from rredcot_viz.model.lm import ProgressFn
    from rredcot_viz.segmenters.base import Segmentation

PLAIN_TRIGGER = "\nTherefore, the final answer is \\boxed{"
THINKING_TRIGGER = "\n</think>\n\nTherefore, the final answers is \\boxed{"  # Thought Anchors, verbatim


@dataclass(frozen=True)
class RREDCoTConfig(EstimatorConfig):
    aggregation: str = "mean_prob"
    alpha: float = 1.0
    beta: float = 1.0
    trigger: str | None = None  # None: the Thought Anchors suffix for thinking traces, else PLAIN_TRIGGER
    answer_span: str = "answer_brace"  # score Y* ‖ "}" (the brace shows the answer is complete), or "answer"
    path_separator: str = "\n\n"
    extra_references: tuple[str, ...] = ()  # more correct paths for v-hat (never the trace itself)
    debias: bool = False  # RLPR-style: R-hat_t <- clip(R-hat_t - R-hat_1, 0, 1)
    max_candidates: int = 24  # candidate_normalized: at most this many numbers (the latest ones)

    def __post_init__(self) -> None:
        if self.aggregation != CANDIDATE_NORMALIZED and self.aggregation not in aggregations:
            valid = ", ".join([*aggregations.names(), CANDIDATE_NORMALIZED])
            raise ConfigError(f"unknown aggregation {self.aggregation!r}; choose one of {valid}")
        if self.alpha < 0 or self.beta < 0 or self.alpha + self.beta == 0:
            raise ConfigError(f"alpha and beta must be >= 0 and not both 0, got {self.alpha}, {self.beta}")
        if self.answer_span not in ("answer_brace", "answer"):
            raise ConfigError(f"answer_span must be 'answer_brace' or 'answer', got {self.answer_span!r}")


@estimators.register("rredcot")
class RREDCoTEstimator(ValueEstimator):
    name = "rredcot"
    Config = RREDCoTConfig
    provenance = "paper (arXiv 2606.06475); exact equations are design choices (METHOD.md §3)"
    needs = ("outcome", "reference_answer", "reference_solution")

    def check(self, trace) -> None:
        super().check(trace)
        if self.config.beta > 0 and _same_text(trace.reference_solution, trace.cot):
            raise MissingReferenceError(
                "this trace is its own reference solution (e.g. a dataset solution imported as a trace), and a "
                "trace must never be its own reference for v-hat; use 'answer_only', or analyse a model's trace"
            )

    # ------------------------------------------------------------------ what to score
    def trigger(self, context: TraceContext) -> str:
        if self.config.trigger is not None:
            return self.config.trigger
        return THINKING_TRIGGER if "</think>" in context.trace.cot else PLAIN_TRIGGER

    def answer_target(self, answer: str) -> str:
        answer = scoring_form(answer)
        return answer + "}" if self.config.answer_span == "answer_brace" else answer

    def reference_path(self, context: TraceContext, solution: str) -> str:
        """P*: the solution as given when it states its answer in ``\\boxed{}``, else U* ‖ trigger ‖ Y* ‖ "}"."""
        if "\\boxed" in solution:
            return solution
        return solution.rstrip() + self.trigger(context) + scoring_form(context.trace.reference_answer) + "}"

    def candidates(self, context: TraceContext) -> list[str]:
        reference = context.trace.reference_answer
        pool = numbers_in(context.trace.question + "\n" + context.region_text("reasoning"))
        others = [n for n in pool if not answers_equivalent(n, reference)]
        return others[-self.config.max_candidates :] if self.config.max_candidates else []

    def series(self, context: TraceContext) -> list[ScoreSeries]:
        trigger = self.trigger(context)
        series = []
        if self.config.alpha > 0:
            series.append(ScoreSeries("answer", trigger, self.answer_target(context.trace.reference_answer)))
            if self.config.aggregation == CANDIDATE_NORMALIZED:
                series += [
                    ScoreSeries(f"candidate:{c}", trigger, self.answer_target(c)) for c in self.candidates(context)
                ]
        if self.config.beta > 0:
            extra = [p for p in self.config.extra_references if not _same_text(p, context.trace.cot)]
            paths = [context.trace.reference_solution, *extra]
            separator = self.config.path_separator
            series += [
                ScoreSeries(f"path:{i}", separator, self.reference_path(context, p)) for i, p in enumerate(paths)
            ]
        return series

    # ------------------------------------------------------------------ combine
    def estimate(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        self.check(context.trace)
        series = self.series(context)
        prefixes = segmentation.state_prefixes
        return self.combine(series, context.scores(series, prefixes), len(prefixes), context.trace.outcome)

    def combine(
        self, series: list[ScoreSeries], scores: dict[str, list[np.ndarray]], n_states: int, outcome: float
    ) -> StateValues:
        """State values from the per-token log-probs of each series at each state (no model involved), so the
        trainer can score a whole group of rollouts in one packed call and reuse this arithmetic."""
        config = self.config
        components: dict[str, np.ndarray] = {}
        notes: list[str] = []
        r_hat = np.zeros(n_states)
        if config.alpha > 0:
            answer = scores["answer"]
            if config.aggregation == CANDIDATE_NORMALIZED:
                names = [s.name for s in series if s.name.startswith("candidate:")]
                r_hat = np.array(
                    [candidate_normalized(answer[i], [scores[n][i] for n in names]) for i in range(n_states)]
                )
                notes.append(f"R-hat renormalised over {len(names) + 1} candidate answers")
            else:
                r_hat = np.array([aggregations.get(config.aggregation)(lp) for lp in answer])
            components["answer_logprob"] = np.array([lp.sum() for lp in answer])
            if config.debias:
                r_hat = np.clip(r_hat - r_hat[0], 0.0, 1.0)
            components["R_hat"] = r_hat
        v_hat = np.zeros(n_states)
        if config.beta > 0:
            path_names = [s.name for s in series if s.name.startswith("path:")]
            # v-hat shares R-hat's aggregation; candidate normalisation has no meaning for a path
            path_aggregation = "mean_prob" if config.aggregation == CANDIDATE_NORMALIZED else config.aggregation
            per_path = np.array([[aggregations.get(path_aggregation)(lp) for lp in scores[n]] for n in path_names])
            v_hat = per_path.max(axis=0)
            components["v_hat"] = v_hat
            components["path_logprob"] = np.array([lp.sum() for lp in scores[path_names[0]]])
            if len(path_names) > 1:
                notes.append(f"v-hat: maximum over {len(path_names)} reference paths")
            dropped = len(config.extra_references) + 1 - len(path_names)
            if dropped:
                notes.append(f"ignored {dropped} extra reference path(s) identical to the trace itself")
        q_model = config.alpha * r_hat + config.beta * v_hat
        components["Q_model"] = q_model
        values = q_model.copy()
        values[-1] = outcome  # terminal: Q-hat_{K+1} := R
        return StateValues(self.name, values, components, notes=notes)


@dataclass(frozen=True)
class AnswerOnlyConfig(RREDCoTConfig):
    beta: float = 0.0


@estimators.register("answer_only")
class AnswerOnlyEstimator(RREDCoTEstimator):
    """Ablation: Q-hat = R-hat (answer now), no reference solution needed."""

    name = "answer_only"
    Config = AnswerOnlyConfig
    needs = ("outcome", "reference_answer")


@dataclass(frozen=True)
class ContinueOnlyConfig(RREDCoTConfig):
    alpha: float = 0.0


@estimators.register("continue_only")
class ContinueOnlyEstimator(RREDCoTEstimator):
    """Ablation: Q-hat = v-hat (continue along the reference path)."""

    name = "continue_only"
    Config = ContinueOnlyConfig
    needs = ("outcome", "reference_answer", "reference_solution")


def _same_text(a: str | None, b: str) -> bool:
    return a is not None and " ".join(a.split()) == " ".join(b.split())


def scoring_form(answer: str) -> str:
    """The answer string that is scored: thousands separators dropped from numbers (``2,125`` -> ``2125``)."""
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", answer.strip())
