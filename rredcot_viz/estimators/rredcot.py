"""RREDCoT's no-generation estimators (docs/method.md §3, arXiv 2606.06475).

- R-hat_t: the probability of the reference answer right after s_t plus an answer trigger
  (``s_t ‖ trigger ‖ Y* ‖ "}"``, scoring ``Y* ‖ "}"``), aggregated per ``aggregation``;
- v-hat_t: the importance-sampling estimate over the reference path with a point proposal, i.e. the
  likelihood of P* after ``s_t ‖ "\\n\\n"``, computed in log space and aggregated by ``path_aggregation``;
  the ``whole`` proposal (default) scores all of P* after every prefix, which agreed best with MC(16) on
  non-final segments (bench/compare.py); ``remaining`` scores only the reference steps still ahead of the
  prefix (after the last step whose new numbers the prefix already states), since the whole P* can score
  about the same everywhere (docs/method.md revision 3); extra reference paths widen the proposal (the maximum
  of the normalised scores, so it can only rise as references are added);
- Q-hat_t = alpha R-hat_t + beta v-hat_t, with Q-hat_{K+1} := R (the observed outcome).

``answer_only`` (alpha=1, beta=0) and ``continue_only`` (alpha=0, beta=1) are the ablations. The non-positive
bias of v-hat holds for the unnormalised estimator only; once length-normalised it is a guide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from rredcot_viz.errors import ConfigError, MissingReferenceError
from rredcot_viz.estimators.aggregation import CANDIDATE_NORMALIZED, aggregations, candidate_normalized
from rredcot_viz.estimators.base import EstimatorConfig, ValueEstimator, estimators
from rredcot_viz.settings import setting
from rredcot_viz.traces.answers import answers_equivalent, last_number_note, numbers_in
from rredcot_viz.types import ScoreSeries, StateValues

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation

PathProposal = Literal["remaining", "whole"]
PATH_PROPOSALS: tuple[PathProposal, ...] = get_args(PathProposal)
OWN_ANSWER_REACHED = 1.0  # own_answer's last state on a trace without an outcome: it reached its own answer
UNLABELLED_NOTE = (
    "No correct/wrong label and no reference answer: the last state counts as 1 (the trace reached its own answer), "
    "so σ is credit toward that answer, right or wrong."
)
PLAIN_TRIGGER = "\nTherefore, the final answer is \\boxed{"
THINKING_TRIGGER = "\n</think>\n\nTherefore, the final answers is \\boxed{"  # Thought Anchors, verbatim


def _answer_aggregations() -> list[str]:
    return [*aggregations.names(), CANDIDATE_NORMALIZED]


def alpha_setting(default: float) -> Any:
    return setting(default, "weight of R-hat (answer now) in Q-hat", low=0.0)


def beta_setting(default: float) -> Any:
    return setting(default, "weight of v-hat (the reference path from here) in Q-hat", low=0.0)


@dataclass(frozen=True)
class RREDCoTConfig(EstimatorConfig):
    aggregation: str = setting("seq_prob", "how R-hat reads the answer's token probabilities (seq_prob: the "
                               "span's probability; mean_prob is not one)", choices=_answer_aggregations)  # fmt: skip
    path_aggregation: str = setting("geo_mean", "how v-hat reads the reference path's token probabilities "
                                    "(geo_mean: length-normalised)", choices=aggregations.names)  # fmt: skip
    # whole, by measurement: it agreed best with MC(16) on non-final segments (bench/compare.py, docs/BENCHES.md)
    path_proposal: PathProposal = setting("whole", "v-hat scores the whole reference path after every prefix, or "
                                          "only the reference steps still ahead of it", advanced=True)  # fmt: skip
    alpha: float = alpha_setting(1.0)
    beta: float = beta_setting(1.0)
    trigger: str | None = setting(None, "text after the prefix that asks for the answer (none: the Thought Anchors "
                                  "suffix for thinking traces, else the plain one)", advanced=True)  # fmt: skip
    answer_span: Literal["answer_brace", "answer"] = setting("answer_brace", "score the answer with its closing "
                                                             "brace (shows it is complete) or alone",
                                                             advanced=True)  # fmt: skip
    path_separator: str = setting("\n\n", "text between the prefix and the reference path", advanced=True)
    extra_references: tuple[str, ...] = ()  # more correct paths for v-hat (never the trace itself); texts, no option
    debias: bool = setting(False, "RLPR debiasing: R-hat_t <- clip(R-hat_t - R-hat_1, 0, 1)", advanced=True)
    max_candidates: int = setting(24, "candidate_normalized: at most this many numbers (the latest ones)", low=0,
                                  advanced=True)  # fmt: skip

    def __post_init__(self) -> None:
        for name in ("aggregation", "path_aggregation"):  # a registered alias (mean_token_prob) is stored by its name
            if getattr(self, name) in aggregations:
                object.__setattr__(self, name, aggregations.resolve(getattr(self, name)))
        super().__post_init__()
        if self.alpha + self.beta == 0:
            raise ConfigError(f"alpha and beta must be >= 0 and not both 0, got {self.alpha}, {self.beta}")


@estimators.register("rredcot")
class RREDCoTEstimator(ValueEstimator):
    name = "rredcot"
    Config = RREDCoTConfig
    provenance = "paper (arXiv 2606.06475); exact equations are design choices (docs/method.md §3)"
    needs = ("outcome", "reference_answer", "reference_solution")
    credit = True
    auto_rank = 3

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

    def target_answer(self, trace) -> str:
        """Y*, the answer whose probability R-hat reads: the reference answer (``own_answer``: the trace's own)."""
        return trace.reference_answer

    def answer_target(self, answer: str) -> str:
        answer = scoring_form(answer)
        return answer + "}" if self.config.answer_span == "answer_brace" else answer

    def reference_path(self, context: TraceContext, solution: str) -> str:
        """P*: the solution as given when it states its answer in ``\\boxed{}``, else U* ‖ trigger ‖ Y* ‖ "}"."""
        if "\\boxed" in solution:
            return solution
        return solution.rstrip() + self.trigger(context) + scoring_form(context.trace.reference_answer) + "}"

    def candidates(self, context: TraceContext) -> list[str]:
        reference = self.target_answer(context.trace)
        pool = numbers_in(context.trace.question + "\n" + context.region_text("reasoning"))
        others = [n for n in pool if not answers_equivalent(n, reference)]
        return others[-self.config.max_candidates :] if self.config.max_candidates else []

    def series(self, context: TraceContext) -> list[ScoreSeries]:
        trigger = self.trigger(context)
        series = []
        if self.config.alpha > 0:
            series.append(ScoreSeries("answer", trigger, self.answer_target(self.target_answer(context.trace))))
            if self.config.aggregation == CANDIDATE_NORMALIZED:
                series += [
                    ScoreSeries(f"candidate:{c}", trigger, self.answer_target(c)) for c in self.candidates(context)
                ]
        if self.config.beta > 0:
            extra = [p for p in self.config.extra_references if not _same_text(p, context.trace.cot)]
            paths = [context.trace.reference_solution, *extra]
            separator = self.config.path_separator
            per_state = self.config.path_proposal == "remaining"
            series += [
                ScoreSeries(f"path:{i}", separator, self.reference_path(context, p), per_state)
                for i, p in enumerate(paths)
            ]
        return series

    def state_target(self, series: ScoreSeries, subject, prefix: int) -> str:
        """The remaining reference path after the first ``prefix`` response tokens (``path_proposal``)."""
        if not series.per_state:
            return series.target
        return remaining_path(series.target, subject.trace.question, subject.response.prefix_text(prefix))

    # ------------------------------------------------------------------ combine
    def state_values(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        self.check(context.trace)
        series = self.series(context)
        prefixes = segmentation.state_prefixes
        scores = context.scores(series, prefixes, self)
        return self.combine(series, scores, len(prefixes), self.outcome(context.trace))

    def outcome(self, trace) -> float:
        """R, the value of the last state: the trace's outcome."""
        return trace.outcome

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
            aggregate = aggregations.get(config.path_aggregation)
            per_path = np.array([[aggregate(lp) for lp in scores[n]] for n in path_names])
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
    beta: float = beta_setting(0.0)


@estimators.register("answer_only")
class AnswerOnlyEstimator(RREDCoTEstimator):
    """Ablation: Q-hat = R-hat (answer now), no reference solution needed."""

    name = "answer_only"
    Config = AnswerOnlyConfig
    needs = ("outcome", "reference_answer")
    auto_rank = 2
    fallback_note = "this trace has a reference answer but no reference solution, so the curve is R̂ alone (β = 0)."


@estimators.register("own_answer")
class OwnAnswerEstimator(AnswerOnlyEstimator):
    """Reference-free R-hat: the probability of the answer the trace itself gave, after each prefix.

    On a correct trace that answer is the right one, so the value is R-hat; on a failed trace the value is
    1 - P(its own wrong answer), so it falls where support for the wrong answer rises (the first-error signal
    when a dataset has an outcome label but no reference answer). Without an outcome label the last state is
    1 (the trace reached its own answer): credit toward that answer, so any trace with a stated answer gets
    values. Needs only a stated answer.
    """

    name = "own_answer"
    needs = ("answer",)
    credit = False  # its target is the trace's own answer; a trainer credits toward the problem's reference
    auto_rank = 1  # the reference-free last resort
    fallback_note = (
        "this trace has no reference answer, so the heatmap is credit toward its own final answer: the probability "
        "of that answer after each segment (1 − that on a trace labelled wrong)."
    )
    provenance = "design choice (configurable): reference-free target for R-hat"

    def check(self, trace) -> None:
        ValueEstimator.check(self, trace)

    def target_answer(self, trace) -> str:
        return trace.answer

    def outcome(self, trace) -> float:
        """The outcome; without one, 1: the trace reached its own answer, the target here."""
        return OWN_ANSWER_REACHED if trace.outcome is None else trace.outcome

    def state_values(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        result = super().state_values(context, segmentation, progress)
        unlabelled = UNLABELLED_NOTE if context.trace.outcome is None else None
        last_number = last_number_note(context.trace.cot) if context.trace.final_answer is None else None
        result.notes.extend(note for note in (unlabelled, last_number) if note)
        return result

    def combine(
        self, series: list[ScoreSeries], scores: dict[str, list[np.ndarray]], n_states: int, outcome: float
    ) -> StateValues:
        result = super().combine(series, scores, n_states, outcome)
        support = result.components["R_hat"]
        values = support.copy() if outcome >= 0.5 else 1.0 - support
        values[-1] = outcome
        result.components["Q_model"] = values.copy()
        result.values = values
        if outcome < 0.5:
            result.notes.append("failed trace: value = 1 - P(its own wrong answer)")
        return result


@dataclass(frozen=True)
class ContinueOnlyConfig(RREDCoTConfig):
    alpha: float = alpha_setting(0.0)


@estimators.register("continue_only")
class ContinueOnlyEstimator(RREDCoTEstimator):
    """Ablation: Q-hat = v-hat (continue along the reference path)."""

    name = "continue_only"
    Config = ContinueOnlyConfig
    needs = ("outcome", "reference_answer", "reference_solution")
    auto_rank = 0  # an ablation, never the automatic choice


def _same_text(a: str | None, b: str) -> bool:
    return a is not None and " ".join(a.split()) == " ".join(b.split())


def scoring_form(answer: str) -> str:
    """The answer string that is scored: thousands separators dropped from numbers (``2,125`` -> ``2125``)."""
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", answer.strip())


_LINE_END = re.compile(r"\n+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def reference_steps(path: str) -> list[tuple[int, int]]:
    """The steps of a reference path as character spans: its non-empty lines, or its sentences when it is a
    single line."""
    pattern = _LINE_END if "\n" in path.strip() else _SENTENCE_END
    spans, start = [], 0
    for match in pattern.finditer(path):
        if path[start : match.start()].strip():
            spans.append((start, match.end()))
        start = match.end()
    if path[start:].strip():
        spans.append((start, len(path)))
    return spans or [(0, len(path))]


def remaining_path(path: str, question: str, prefix_text: str) -> str:
    """The part of ``path`` still ahead of a prefix: the steps after the last one whose new numbers (those
    not in the question or an earlier step) all appear in the prefix. The step that writes the answer always
    remains, and a prefix that reached no step keeps the whole path."""
    steps = reference_steps(path)
    seen = set(numbers_in(question))
    stated = set(numbers_in(prefix_text))
    reached = -1
    for index, (start, end) in enumerate(steps[:-1]):
        new = [n for n in numbers_in(path[start:end]) if n not in seen]
        seen.update(new)
        if new and all(n in stated for n in new):
            reached = index
    return path if reached < 0 else path[steps[reached + 1][0] :]
