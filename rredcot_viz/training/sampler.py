"""``RolloutSampler``: the rollouts of a step, as methods ask for them (``methods.base.RolloutSource``).

Every request of a call is sampled in one batch: the prompts' common few-shot prefix and each distinct
prompt (plus reset prefix) are prefilled once, and all rows decode together, which on a CPU costs about
what one group alone costs. Seeds derive from (run seed, step, *request key, i), so a rollout does not depend
on what else was sampled with it, and a resumed run draws exactly what the uninterrupted one would have.
Each rollout is segmented by the analyzer's own segmenter with the entropies recorded while sampling.
"""

from __future__ import annotations

import hashlib

import numpy as np

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.training.config import TrainConfig
from rredcot_viz.training.credit import segment_rollout
from rredcot_viz.training.methods.base import SampleRequest
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.task import Problem, reward
from rredcot_viz.types import Generation

SYSTEM = "Solve the problem step by step, then state the answer as 'The answer is N.'"


def derived_seed(*parts: object) -> int:
    return int(hashlib.sha256(repr(parts).encode()).hexdigest()[:8], 16)


def problem_prompt(lm: LanguageModel, problem: Problem) -> str:
    """The chat-formatted prompt the trainer samples a problem's rollouts from."""
    return lm.format_prompt(problem.prompt or problem.question, system=problem.system or SYSTEM)


class RolloutSampler:
    def __init__(self, policy: LanguageModel, config: TrainConfig):
        self._policy = policy
        self.config = config
        self.step = 0  # the loop sets it before each step: seeds derive from it
        self._prompts: dict[int, list[int]] = {}

    @property
    def policy(self) -> LanguageModel:
        return self._policy

    def rng(self, *key: object) -> np.random.Generator:
        return np.random.default_rng(derived_seed(self.config.seed, self.step, *key))

    def sampling(self, problems: list[Problem]) -> SamplingConfig:
        """The rollouts' sampling settings; the problems' own stop strings end a rollout too."""
        c = self.config
        stops = tuple(dict.fromkeys(stop for problem in problems for stop in problem.stop))
        return SamplingConfig(c.temperature, c.top_p, max_new_tokens=c.max_new_tokens, stop_strings=stops,
                              stop_on_answer=True, batch_size=64)  # fmt: skip

    def prompt_ids(self, problem: Problem) -> list[int]:
        key = id(problem)
        if key not in self._prompts:
            self._prompts[key] = self._policy.encode_prompt(problem_prompt(self._policy, problem))
        return self._prompts[key]

    def sample(self, requests: list[SampleRequest]) -> list[list[TrainRollout]]:
        """The rollouts of every request, in order, all sampled in one call."""
        results: list[list[TrainRollout]] = [[] for _ in requests]
        rows = [(i, j) for i, request in enumerate(requests) for j in range(request.n)]
        if not rows:
            return results
        prompts = [self.prompt_ids(requests[i].problem) + list(requests[i].prefix) for i, _ in rows]
        seeds = [derived_seed(self.config.seed, self.step, *requests[i].key, j) for i, j in rows]
        self._policy.model.eval()
        sampling = self.sampling([request.problem for request in requests])
        generations = self._policy.sample(prompts, seeds, sampling).generations
        for (i, _), generation in zip(rows, generations, strict=True):
            results[i].append(self._rollout(requests[i], generation))
        return results

    def _rollout(self, request: SampleRequest, generation: Generation) -> TrainRollout:
        prefix = list(request.prefix)
        completion = prefix + generation.token_ids
        text = self._policy.decode(completion)
        parent_entropies = list(request.prefix_entropies or [0.0] * len(prefix))[: len(prefix)]
        rollout = TrainRollout(
            self.prompt_ids(request.problem),
            completion,
            text,
            reward(text, request.problem.answer),
            generation.seed,
            suffix_start=len(prefix),
            info={
                "finish_reason": generation.finish_reason,
                "suffix_char": len(self._policy.decode(prefix)),
                "entropies": parent_entropies + list(generation.entropies),
            },
        )
        segment_rollout(self._policy, rollout, self.config.credit)
        return rollout
