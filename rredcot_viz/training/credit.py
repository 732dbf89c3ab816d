"""RREDCoT credit for a group of rollouts of one prompt, shared by the built-in trainer and the TRL trainer.

It runs the analyzer's scoring plan (``scoring.plan``) on sampled ids: the same ``ResponseTokens`` /
``SegmenterInput`` (with the entropies recorded while sampling), the same segmenter objects, the same
``plan_items`` and the estimator's own ``combine``, so a rollout credited here and the same text analysed
in the app get the same sigma (tests/training/test_credit.py). Only the packing differs: every state of
every rollout is a continuation of the shared prompt, scored in one call (METHOD.md §5)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import numpy as np

from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.estimators.coupling import grpo_advantages, segment_advantages, token_advantages
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.packing import Continuation
from rredcot_viz.scoring.plan import ResponseTokens, ScoringSubject, plan_items
from rredcot_viz.segmenters import segmenter_takes_count, segmenters
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.config import TrainConfig
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import Problem


def credit_segmenter(config: TrainConfig, text: str) -> Segmenter:
    """The segmenter the trainer credits with: one segment per thought when the completion closes its steps
    with ``config.step_delimiter`` (the RRPO/SRPO thought MDP, METHOD.md §1.3), else ``config.segmenter`` with
    at most ``config.segments`` segments."""
    if config.step_delimiter and config.step_delimiter in text:
        return segmenters.get("delimiter")(delimiter=config.step_delimiter)
    if segmenter_takes_count(config.segmenter):
        return segmenters.get(config.segmenter)(k=config.segments)
    return segmenters.get(config.segmenter)()


def rollout_response(policy: LanguageModel, rollout: TrainRollout) -> ResponseTokens:
    """The rollout's sampled ids as they are (never re-tokenised), with each token's start offset."""
    return ResponseTokens.from_ids(policy, rollout.completion_ids)


def segment_rollout(policy: LanguageModel, rollout: TrainRollout, config: TrainConfig) -> list[int]:
    """Segment the ``config.credit_scope`` region of a completion exactly as the analyzer would segment the
    same text (entropies recorded while sampling, same token-span rule); sets ``rollout.segments`` and
    ``rollout.info["segment_chars"]`` and returns the state prefixes s_1..s_{K+1}."""
    response = rollout_response(policy, rollout)
    if not response.n_tokens or not response.text.strip():
        rollout.segments = [(0, response.n_tokens)]
        rollout.info["segment_chars"] = [(0, len(response.text))]
        return [0, response.n_tokens]
    entropies = rollout.info.get("entropies")
    inp = response.segmenter_input(config.credit_scope, None if entropies is None else np.asarray(entropies))
    segmentation = credit_segmenter(config, inp.text).segment(inp)
    prefixes = list(segmentation.state_prefixes)
    rollout.segments = list(pairwise(prefixes))
    rollout.info["segment_chars"] = [segment.char_span for segment in segmentation.segments]
    rollout.info["segmenter"] = segmentation.strategy
    return prefixes


def credit_estimator(name: str, options: dict, problem: Problem) -> ValueEstimator:
    """Estimator ``name``, or R-hat alone (``answer_only``) for a problem without a reference solution."""
    return estimators.get(name if problem.solution else "answer_only")(**options)


def rollout_subject(problem: Problem, rollout: TrainRollout, response: ResponseTokens) -> ScoringSubject:
    trace = Trace(
        problem.question,
        response.text,
        reference_answer=problem.answer,
        reference_solution=problem.solution,
        correct=bool(rollout.reward),
    )
    return ScoringSubject(trace, response)


def group_sigmas(
    policy: LanguageModel,
    config: TrainConfig,
    estimator: ValueEstimator,
    prompt: list[int],
    rollouts: list[TrainRollout],
    problem: Problem,
) -> list[np.ndarray]:
    """RREDCoT sigma (``exact_sum``) of every rollout of a group under the current policy, scored in one packed
    call (rollouts segmented per ``config``). The terminal state's value is the reward, so it is never scored."""
    encoded: dict[str, tuple[int, ...]] = {}

    def encode(text: str) -> tuple[int, ...]:
        if text not in encoded:
            encoded[text] = tuple(policy.encode(text))
        return encoded[text]

    requests: dict[Continuation, int] = {}  # unique requests: s_1 (the prompt alone) is shared by all rollouts
    plans = []
    for rollout in rollouts:
        prefixes = segment_rollout(policy, rollout, config) if not rollout.segments else _prefixes(rollout)
        if not rollout.completion_ids or not rollout.text.strip():
            plans.append(None)
            continue
        response = rollout_response(policy, rollout)
        subject = rollout_subject(problem, rollout, response)
        series = estimator.series(subject)
        plan = plan_items(estimator, subject, series, prefixes[:-1], encode)
        slots = {
            name: [
                requests.setdefault(
                    Continuation(len(prompt), response.ids[: item.prefix] + item.context, item.target), len(requests)
                )
                for item in items
            ]
            for name, items in plan.items()
        }
        targets = {s.name: len(encode(s.target)) for s in series}
        plans.append((series, prefixes, slots, targets))
    unique = policy.score_continuations(prompt, list(requests), operation="credit").logprobs if requests else []
    sigmas = []
    for rollout, plan in zip(rollouts, plans, strict=True):
        if plan is None:
            sigmas.append(np.array([rollout.reward]))
            continue
        series, prefixes, slots, targets = plan
        # the terminal state's log-probs are never read (its value is the reward): a zero filler
        scores = {name: [unique[i] for i in row] + [np.zeros(targets[name])] for name, row in slots.items()}
        values = estimator.combine(series, scores, len(prefixes), rollout.reward).values
        rollout.info["values"] = values.tolist()
        sigma = redistribute(values, "exact_sum")
        rollout.info["sigma"] = sigma.tolist()
        sigmas.append(sigma)
    return sigmas


def _prefixes(rollout: TrainRollout) -> list[int]:
    return [rollout.segments[0][0], *(end for _, end in rollout.segments)]


class GroupCredit:
    """The ``CreditScorer`` the trainer hands its method: sigmas of a group under the policy being trained."""

    def __init__(
        self,
        policy: LanguageModel,
        config: TrainConfig,
        problems: list[Problem],
        prompt_ids: Callable[[Problem], list[int]],
    ):
        self.policy, self.config, self.problems, self.prompt_ids = policy, config, problems, prompt_ids

    def sigmas(self, group: Group, estimator: str = "rredcot", options: dict | None = None) -> list[np.ndarray]:
        problem = self.problems[group.problem_index]
        chosen = credit_estimator(estimator, options or {}, problem)
        return group_sigmas(self.policy, self.config, chosen, self.prompt_ids(problem), group.rollouts, problem)


def couple_group(
    rollouts: list[TrainRollout],
    sigmas: list[np.ndarray],
    coupling: str = "value_baseline",
    coupling_lambda: float = 1.0,
    gae_lambda: float = 1.0,
) -> None:
    """Set each rollout's per-segment and per-token advantages from the group's sigmas (METHOD.md §5)."""
    rewards = np.array([r.reward for r in rollouts])
    per_segment = segment_advantages(sigmas, rewards, coupling, coupling_lambda, gae_lambda=gae_lambda)
    for rollout, advantages, baseline in zip(rollouts, per_segment, grpo_advantages(rewards), strict=True):
        rollout.segment_advantages = [float(a) for a in advantages]
        rollout.token_advantages = token_advantages(
            advantages, rollout.segments, len(rollout.completion_ids), float(baseline), coupling
        )
