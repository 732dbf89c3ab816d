"""RREDCoT credit for a group of rollouts of one prompt, shared by the built-in trainer and the TRL trainer:
segment each completion into at most ``config.segments`` pieces (as token spans of its sampled ids), score
every state of every rollout under the current policy in one packed call, redistribute, and couple sigma to
per-segment and per-token advantages (METHOD.md §5)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.coupling import grpo_advantages, segment_advantages, token_advantages
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.packing import Continuation
from rredcot_viz.segmenters import segmenters
from rredcot_viz.segmenters.base import SegmenterInput
from rredcot_viz.segmenters.hybrid import merge_pieces
from rredcot_viz.segmenters.scope import reasoning_end
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.config import TrainConfig
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.task import Problem


class _SeriesView:
    """What ``ValueEstimator.series`` reads of a trace context, for a rollout that has no TraceContext."""

    def __init__(self, trace: Trace):
        self.trace = trace

    def region_text(self, scope: str) -> str:
        return self.trace.cot[: reasoning_end(self.trace.cot, scope)]


def token_char_starts(lm: LanguageModel, ids: list[int]) -> list[int]:
    """Character offset where each token of ``ids`` starts in ``decode(ids)`` (sampled ids, no re-tokenising)."""
    return [len(lm.decode(ids[:i])) for i in range(len(ids))]


def segment_rollout(policy: LanguageModel, rollout: TrainRollout, config: TrainConfig) -> list[int]:
    """Segments of a completion (keyword/newline pieces of ``config.credit_scope``, merged shortest-first
    down to ``config.segments``) as token spans of its sampled ids; returns the state prefixes."""
    starts = token_char_starts(policy, rollout.completion_ids)
    scope = config.credit_scope
    end_char = reasoning_end(rollout.text, scope) if rollout.text.strip() else len(rollout.text)
    region = rollout.text[:end_char]
    cuts: list[int] = []
    if region.strip():
        inp = SegmenterInput(region, tuple(range(len(region))), np.zeros(len(region)))
        cuts = [segment.char_span[0] for segment in segmenters.get("keyword")().segment(inp).segments[1:]]
    to_token = lambda char: sum(1 for start in starts if start < char)  # noqa: E731
    end = max(to_token(end_char), 1) if rollout.completion_ids else 0
    token_cuts = sorted({c for c in (to_token(char) for char in cuts) if 0 < c < end})
    if len(token_cuts) + 1 > config.segments:  # merge the shortest neighbours first
        token_cuts, _ = merge_pieces([0, *token_cuts, end], np.ones(max(end, 1)), config.segments, "sum")
    bounds = [0, *token_cuts, end]
    rollout.segments = list(pairwise(bounds))
    text_end = len(rollout.text)
    rollout.info["segment_chars"] = [
        (starts[a] if a < len(starts) else text_end, starts[b] if b < len(starts) else text_end)
        for a, b in rollout.segments
    ]
    return bounds


def group_sigmas(
    policy: LanguageModel, config: TrainConfig, problem: Problem, prompt: list[int], rollouts: list[TrainRollout]
) -> list[np.ndarray]:
    """RREDCoT sigma of every rollout of a group under the current policy, scored in one packed call:
    each state of each rollout is a continuation of the shared prompt (completion prefix, trigger,
    target), so the prompt is encoded once for the whole group. Values come from the estimator's own
    arithmetic (``combine``); the terminal value is the rollout's reward."""
    name = config.estimator if problem.solution else "answer_only"
    estimator = estimators.get(name)(**config.estimator_options)
    requests: dict[Continuation, int] = {}  # unique requests: s_1 (the prompt alone) is shared by all rollouts
    slots: list[int | np.ndarray] = []  # per (rollout, item, state): its request, or the terminal's filler
    plans = []
    for rollout in rollouts:
        states = segment_rollout(policy, rollout, config)
        if not rollout.completion_ids or not rollout.text.strip():
            plans.append(None)
            continue
        trace = Trace(
            problem.question,
            rollout.text,
            reference_answer=problem.answer,
            reference_solution=problem.solution,
            correct=bool(rollout.reward),
        )
        series = estimator.series(_SeriesView(trace))
        first = len(slots)
        for item in series:
            context, target = tuple(policy.encode(item.context)), tuple(policy.encode(item.target))
            for p in states[:-1]:
                request = Continuation(len(prompt), tuple(rollout.completion_ids[:p]) + context, target)
                slots.append(requests.setdefault(request, len(requests)))
            slots.append(np.zeros(len(target)))  # the terminal value is the reward: never read
        plans.append((series, states, first))
    unique = []
    if requests:
        unique = policy.score_continuations(prompt, list(requests), operation="credit").logprobs
    scores = [slot if isinstance(slot, np.ndarray) else unique[slot] for slot in slots]
    sigmas = []
    for rollout, plan in zip(rollouts, plans, strict=True):
        if plan is None:
            sigmas.append(np.array([rollout.reward]))
            continue
        series, states, first = plan
        n = len(states)
        by_name = {item.name: scores[first + i * n : first + (i + 1) * n] for i, item in enumerate(series)}
        values = estimator.combine(series, by_name, n, rollout.reward).values
        rollout.info["values"] = values.tolist()
        sigma = redistribute(values, "exact_sum")
        rollout.info["sigma"] = sigma.tolist()
        sigmas.append(sigma)
    return sigmas


def couple_group(rollouts: list[TrainRollout], sigmas: list[np.ndarray], config: TrainConfig) -> None:
    """Set each rollout's per-segment and per-token advantages from the group's sigmas (coupling mode, lambdas)."""
    rewards = np.array([r.reward for r in rollouts])
    per_segment = segment_advantages(
        sigmas, rewards, config.coupling, config.coupling_lambda, gae_lambda=config.gae_lambda
    )
    for rollout, advantages, baseline in zip(rollouts, per_segment, grpo_advantages(rewards), strict=True):
        rollout.segment_advantages = [float(a) for a in advantages]
        rollout.token_advantages = token_advantages(
            advantages, rollout.segments, len(rollout.completion_ids), float(baseline), config.coupling
        )
