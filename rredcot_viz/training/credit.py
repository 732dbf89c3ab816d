"""RREDCoT credit for a group of rollouts of one prompt, shared by the built-in trainer and the TRL trainer.

It runs the analyzer's scoring plan (``scoring.plan``) on sampled ids: the same ``ResponseTokens`` /
``SegmenterInput`` (with real entropies), the same segmenter objects, the same ``plan_items`` and the
estimator's own ``combine``, so a rollout credited here and the same text analysed in the app get the same
sigma (tests/training/test_credit.py). The packing is the analyzer's too: each rollout (prompt + completion)
is encoded once and its states' continuations are packed after its own KV cache, the prompt's cache shared by
the group (``score_branches``), so credit costs about the group's tokens plus K x the continuation blocks per
rollout, not K x T (bench/credit_cost.py). The terminal state's value is the reward, so it is never scored.

The estimator is the config's, or R-hat alone (``answer_only``) for a problem without a reference solution;
the one used is recorded in every rollout's info (``credit_estimator``) and counted per step
(``estimator_counts``), never switched silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.base import R_HAT_ALONE, ValueEstimator
from rredcot_viz.estimators.coupling import StdMode, grpo_advantages, segment_advantages, token_advantages
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.packing import Continuation
from rredcot_viz.scoring.plan import ResponseTokens, ScoringSubject, plan_items
from rredcot_viz.segmenters import delimiter_segmenter, segmenter_takes_count, segmenters
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.config import CreditConfig
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import Problem
from rredcot_viz.types import ScoreSeries, TokenStats


def credit_segmenter(credit: CreditConfig, text: str) -> Segmenter:
    """The segmenter the trainer credits with: one segment per thought when the completion closes its steps
    with ``credit.step_delimiter`` (the RRPO/SRPO thought MDP, docs/method.md §1.3), else ``credit.segmenter`` with
    at most ``credit.k`` segments."""
    if credit.step_delimiter and credit.step_delimiter in text:
        return delimiter_segmenter(credit.step_delimiter)
    if segmenter_takes_count(credit.segmenter):
        return segmenters.get(credit.segmenter)(k=credit.k)
    return segmenters.get(credit.segmenter)()


def rollout_response(policy: LanguageModel, rollout: TrainRollout) -> ResponseTokens:
    """The rollout's sampled ids as they are (never re-tokenised), with each token's start offset."""
    return ResponseTokens.from_ids(policy, rollout.completion_ids)


def segment_rollout(
    policy: LanguageModel, rollout: TrainRollout, credit: CreditConfig, response: ResponseTokens | None = None
) -> list[int]:
    """Segment the ``credit.credit_scope`` region of a completion exactly as the analyzer would segment the
    same text (the entropies in ``rollout.info``, same token-span rule); sets ``rollout.segments`` and
    ``rollout.info["segment_chars"]`` and returns the state prefixes s_1..s_{K+1}."""
    response = response or rollout_response(policy, rollout)
    if not response.n_tokens or not response.text.strip():
        rollout.segments = [(0, response.n_tokens)]
        rollout.info["segment_chars"] = [(0, len(response.text))]
        return [0, response.n_tokens]
    entropies = rollout.info.get("entropies")
    inp = response.segmenter_input(credit.credit_scope, None if entropies is None else np.asarray(entropies))
    segmentation = credit_segmenter(credit, inp.text).segment(inp)
    prefixes = list(segmentation.state_prefixes)
    rollout.segments = list(pairwise(prefixes))
    rollout.info["segment_chars"] = [segment.char_span for segment in segmentation.segments]
    rollout.info["segmenter"] = segmentation.strategy
    return prefixes


def credit_estimator(credit: CreditConfig, problem: Problem) -> ValueEstimator:
    """``credit.estimator``, or R-hat alone (``answer_only``) for a problem without a reference solution (v-hat
    has no path to score); ``group_sigmas`` records which one credited each rollout."""
    return estimators.get(credit.estimator if problem.solution else R_HAT_ALONE)(**credit.estimator_options)


def estimator_counts(used: list[str | None], credit: CreditConfig) -> dict[str, int]:
    """Step metrics: how many groups (prompts) each estimator credited (``used``: the estimator of each group,
    None where a method credits none), as ``credit_groups_<name>``, zeros included for the configured estimator
    and the fallback so every step logs both; empty when no group was credited."""
    counted = Counter(name for name in used if name is not None)
    if not counted:
        return {}
    names = dict.fromkeys([credit.estimator, R_HAT_ALONE, *sorted(counted)])
    return {f"credit_groups_{name}": counted.get(name, 0) for name in names}


def rollout_subject(problem: Problem, rollout: TrainRollout, response: ResponseTokens) -> ScoringSubject:
    trace = Trace(
        problem.question,
        response.text,
        reference_answer=problem.answer,
        reference_solution=problem.solution,
        correct=bool(rollout.reward),
    )
    return ScoringSubject(trace, response)


@dataclass
class RolloutPlan:
    """What one rollout asks to be scored: per series, the index of each state's request in ``requests``."""

    series: list[ScoreSeries]
    n_states: int
    requests: list[Continuation]  # cuts count tokens of prompt + completion
    slots: dict[str, list[int]]
    target_lengths: dict[str, int]


class GroupPlanner:
    """Segments and plans the rollouts of one group (memoising the encoded texts), and turns each rollout's
    log-probs into values and sigma. Public so that another packing of the same requests (bench/credit_cost.py's
    control, which re-encodes every prefix) scores exactly what ``group_sigmas`` scores."""

    def __init__(
        self,
        policy: LanguageModel,
        credit: CreditConfig,
        estimator: ValueEstimator,
        prompt: list[int],
        problem: Problem,
    ):
        self.policy, self.credit, self.estimator, self.prompt, self.problem = policy, credit, estimator, prompt, problem
        self._encoded: dict[str, tuple[int, ...]] = {}

    def encode(self, text: str) -> tuple[int, ...]:
        if text not in self._encoded:
            self._encoded[text] = tuple(self.policy.encode(text))
        return self._encoded[text]

    def plan(self, rollout: TrainRollout) -> RolloutPlan:
        response = rollout_response(self.policy, rollout)
        if rollout.segments:
            prefixes = [rollout.segments[0][0], *(end for _, end in rollout.segments)]
        else:
            prefixes = segment_rollout(self.policy, rollout, self.credit, response)
        subject = rollout_subject(self.problem, rollout, response)
        series = self.estimator.series(subject)
        items = plan_items(self.estimator, subject, series, prefixes[:-1], self.encode)
        unique: dict[Continuation, int] = {}
        slots = {
            name: [
                unique.setdefault(Continuation(len(self.prompt) + it.prefix, it.context, it.target), len(unique))
                for it in row
            ]
            for name, row in items.items()
        }
        lengths = {s.name: len(self.encode(s.target)) for s in series}
        return RolloutPlan(series, len(prefixes), list(unique), slots, lengths)

    def sigma(self, rollout: TrainRollout, plan: RolloutPlan, logprobs: list[np.ndarray]) -> np.ndarray:
        # the terminal state's log-probs are never read (its value is the reward): a zero filler
        scores = {
            name: [logprobs[i] for i in row] + [np.zeros(plan.target_lengths[name])] for name, row in plan.slots.items()
        }
        values = self.estimator.combine(plan.series, scores, plan.n_states, rollout.reward).values
        rollout.info["values"] = values.tolist()
        sigma = redistribute(values, "exact_sum")
        rollout.info["sigma"] = sigma.tolist()
        return sigma


def scorable(rollout: TrainRollout) -> bool:
    """A rollout with text to credit and a reward (TRL marks a row every reward function declined as NaN)."""
    return bool(rollout.completion_ids) and bool(rollout.text.strip()) and bool(np.isfinite(rollout.reward))


def group_sigmas(
    policy: LanguageModel,
    credit: CreditConfig,
    estimator: ValueEstimator,
    prompt: list[int],
    rollouts: list[TrainRollout],
    problem: Problem,
    progress: ProgressFn | None = None,
) -> list[np.ndarray]:
    """RREDCoT sigma (``exact_sum``) of every rollout of a group under the current policy, in one call that
    encodes the prompt once and each completion once, packing each rollout's continuations after its own cache.

    A rollout not yet segmented is segmented per ``credit``; without entropies in its info (the TRL path) it gets
    those of this same pass, so no extra forward pass is spent on them. A rollout with no text or no reward
    gets sigma ``[reward]``. ``progress(done, total)`` per rollout (it may raise to cancel)."""
    planner = GroupPlanner(policy, credit, estimator, prompt, problem)
    for rollout in rollouts:
        rollout.info["credit_estimator"] = estimator.name
    scored = [i for i, rollout in enumerate(rollouts) if scorable(rollout)]
    for rollout in rollouts:
        if not scorable(rollout) and not rollout.segments:
            segment_rollout(policy, rollout, credit)
    needs_stats = any(not rollouts[i].segments and rollouts[i].info.get("entropies") is None for i in scored)
    plans: dict[int, RolloutPlan] = {}

    def plan(branch: int, stats: TokenStats | None) -> list[Continuation]:
        rollout = rollouts[scored[branch]]
        if stats is not None and not rollout.segments and rollout.info.get("entropies") is None:
            rollout.info["entropies"] = stats.entropies.tolist()
        plans[branch] = planner.plan(rollout)
        return plans[branch].requests

    found = (
        policy.score_branches(
            prompt,
            [rollouts[i].completion_ids for i in scored],
            plan,
            with_stats=needs_stats,
            progress=progress,
            operation="credit",
        ).logprobs
        if scored
        else []
    )
    sigmas = [np.array([rollout.reward]) for rollout in rollouts]
    for branch, index in enumerate(scored):
        sigmas[index] = planner.sigma(rollouts[index], plans[branch], found[branch])
    return sigmas


class GroupCredit:
    """The ``CreditScorer`` the trainer hands its method: sigmas of a group under the policy being trained."""

    def __init__(self, policy: LanguageModel, problems: list[Problem], prompt_ids: Callable[[Problem], list[int]]):
        self.policy, self.problems, self.prompt_ids = policy, problems, prompt_ids

    def sigmas(self, group: Group, credit: CreditConfig) -> list[np.ndarray]:
        problem = self.problems[group.problem_index]
        chosen = credit_estimator(credit, problem)
        return group_sigmas(self.policy, credit, chosen, self.prompt_ids(problem), group.rollouts, problem)


def couple_group(
    rollouts: list[TrainRollout],
    sigmas: list[np.ndarray],
    credit: CreditConfig,
    *,
    std: StdMode = "population",
    scale: float | None = None,
) -> None:
    """Set each rollout's per-segment and per-token advantages from the group's sigmas (docs/method.md §5), with
    ``credit``'s coupling; ``std`` / ``scale`` say what the reward spread is (``coupling.reward_scale``). A
    rollout without a reward (NaN: TRL's unscorable row) is left out of the group's statistics and gets zero
    advantages, as TRL does."""
    rewards = np.array([r.reward for r in rollouts], dtype=float)
    kept = [i for i in range(len(rollouts)) if np.isfinite(rewards[i])]
    for rollout in rollouts:
        rollout.segment_advantages = [0.0] * max(len(rollout.segments), 1)
        rollout.token_advantages = np.zeros(len(rollout.completion_ids))
    if not kept:
        return
    group_rewards = rewards[kept]
    per_segment = segment_advantages(
        [sigmas[i] for i in kept],
        group_rewards,
        credit.coupling,
        credit.coupling_lambda,
        std,
        credit.gae_lambda,
        scale,
    )
    baselines = grpo_advantages(group_rewards, std, scale)
    for index, advantages, baseline in zip(kept, per_segment, baselines, strict=True):
        rollout = rollouts[index]
        rollout.segment_advantages = [float(a) for a in advantages]
        rollout.token_advantages = token_advantages(
            advantages,
            rollout.segments,
            len(rollout.completion_ids),
            float(baseline),
            credit.coupling,
        )


@dataclass(frozen=True)
class CreditedRow:
    """One completion of a generation batch as every process shares it: its row in the batch, its sigmas, its
    segments' token spans, its reward and length."""

    index: int
    sigmas: tuple[float, ...]
    segments: tuple[tuple[int, int], ...]
    reward: float
    tokens: int


@dataclass(frozen=True)
class RowAdvantages:
    segments: list[float]  # one per segment
    tokens: np.ndarray  # one per completion token


def advantages_from_sigmas(
    rows: list[CreditedRow],
    group_size: int,
    credit: CreditConfig,
    *,
    std: StdMode = "population",
    scale: float | None = None,
) -> dict[int, RowAdvantages]:
    """Each row's advantages by its batch index: rows grouped by prompt (``index // group_size``, the order TRL
    generates in) and coupled group by group from their sigmas (``couple_group``). Pure: no model, no processes;
    the TRL plug-in gathers the rows and calls it."""
    groups: dict[int, list[CreditedRow]] = {}
    for row in sorted(rows, key=lambda r: r.index):
        groups.setdefault(row.index // group_size, []).append(row)
    found: dict[int, RowAdvantages] = {}
    for members in groups.values():
        stand_ins = [TrainRollout([], [0] * r.tokens, "", r.reward, 0, segments=list(r.segments)) for r in members]
        couple_group(stand_ins, [np.array(r.sigmas) for r in members], credit, std=std, scale=scale)
        for row, done in zip(members, stand_ins, strict=True):
            found[row.index] = RowAdvantages(list(done.segment_advantages), done.token_advantages)
    return found
