"""What RRPO and SRPO share: a base group plus a reset group sampled from the clean prefix of one failed
parent chain (docs/method.md §9, arXiv 2605.25507; code Ankur-Samanta/SRPO @ 67f4a26). They differ only in where
the reset goes (``reset_step``).

Phase 1 samples fresh chains (at most ``max_fresh_attempts``, four at a time); the first failure becomes the
parent (used only to pick the reset point, never trained on) and the others fill the base group. Without any
failure, all chains form one plain GRPO group (the fallback). Continuations are sampled from the original
prompt plus the prefix; the prefix is masked out of the loss. Advantages are normalised within each group
(population std; an all-equal group gets zeros). Layouts, all with 8 trained rollouts: 1x4 (4 base + 1
prefix x 4, default), 2x4 (2 parents x 4), 1x8 (1 parent x 8, localiser at temperature 0).

The parent's steps (the thoughts a reset lands between) are the configured segmentation (``credit``) of the whole
completion: its ``</thought>`` thoughts when it writes them, else the configured segmenter's cut at ``k`` (5 for
the reset methods; by default the hybrid segmenter's line and keyword pieces merged down to ``k``), or, when that
gives fewer than ``k`` pieces (the built-in task's completions are 2-3 lines), ``k`` pieces of about equal length
cut at distinct word starts (the segmenter that declares ``exact_count``; one per word for a parent of fewer
words, such as an answer-only "The answer is 15."). Step 1
is the empty prefix, so with H steps a uniform reset starts from the question with probability 1/H; every step
logs the share of resets that did (``reset_empty_prefix_share``), that chance averaged over the parents
(``reset_uniform_empty_chance``, the mean of 1/H: what the realised share scatters around under a uniform
reset), and the mean share of the parent kept (``reset_prefix_fraction``).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from itertools import pairwise
from typing import ClassVar

import numpy as np

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.scoring.plan import ResponseTokens
from rredcot_viz.segmenters import exact_count_segmenter
from rredcot_viz.settings import setting
from rredcot_viz.training.config import CreditConfig, Loss, TrainConfig, credit_setting
from rredcot_viz.training.credit import credit_segmenter
from rredcot_viz.training.methods.base import (
    CreditScorer,
    RolloutSource,
    SampleRequest,
    TrainingMethod,
    broadcast_group_advantages,
)
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import Problem

LAYOUTS = {"1x4": (4, 1, 4), "2x4": (0, 2, 4), "1x8": (0, 1, 8)}  # base size, parents, suffixes per parent


@dataclass(frozen=True)
class ResetConfig(TrainConfig):
    """A reset method's settings; its credit's ``k`` is the steps a failed parent is cut into (formerly
    ``reset_steps``: runs stored with it resume, with its value)."""

    renamed: ClassVar[dict[str, str]] = {"reset_steps": "k"}

    loss: Loss = setting("reinforce", "SRPO's loss (docs/method.md §9.4): the sequence mean of token means of A log "
                         "pi (REINFORCE), or the PPO clipped surrogate with a token mean")  # fmt: skip
    layout: str = setting("1x4", "base group + reset groups: 4 + 1x4, 0 + 2x4 or 0 + 1x8 (8 trained rollouts)",
                          choices=tuple(LAYOUTS))  # fmt: skip
    credit: CreditConfig = credit_setting(start=CreditConfig(k=5))  # a parent is cut into 5 steps
    max_fresh_attempts: int = setting(12, "fresh chains sampled at most while looking for a failed parent", low=1,
                                      advanced=True)  # fmt: skip


def parent_steps(policy: LanguageModel, parent: TrainRollout, config: ResetConfig) -> list[tuple[int, int]]:
    """The parent's steps as completion-token spans covering it end to end (see the module note); records their
    character spans (``reset_step_chars``) and the segmenter that cut them (``reset_segmenter``)."""
    response = ResponseTokens.from_ids(policy, parent.completion_ids)
    if not response.n_tokens or not response.text.strip():
        parent.info.update(reset_step_chars=[(0, len(response.text))], reset_segmenter="none")
        return [(0, response.n_tokens)]
    entropies = parent.info.get("entropies")
    inp = response.segmenter_input("whole", None if entropies is None else np.asarray(entropies))
    configured = credit_segmenter(config.credit, inp.text)  # its thoughts, else the configured segmenter at k
    segmentation = configured.segment(inp)
    if not configured.cuts_at_delimiter and len(segmentation.segments) < config.credit.k:
        segmentation = exact_count_segmenter(config.credit.k).segment(inp)
    parent.info["reset_step_chars"] = [segment.char_span for segment in segmentation.segments]
    parent.info["reset_segmenter"] = segmentation.strategy
    return list(pairwise(segmentation.state_prefixes))


class ResetMethod(TrainingMethod):
    config: ResetConfig

    def collect(self, source: RolloutSource, problems: list[tuple[int, Problem]]) -> list[Group]:
        return [group for index, problem in problems for group in self._collect_one(source, problem, index)]

    def _collect_one(self, source: RolloutSource, problem: Problem, index: int) -> list[Group]:
        base_size, parents_needed, suffixes = LAYOUTS[self.config.layout]
        fresh: list[TrainRollout] = []
        parents: list[TrainRollout] = []
        batch = 0
        while len(fresh) + len(parents) < self.config.max_fresh_attempts:
            (drawn,) = source.sample([SampleRequest(problem, index, 4, (index, "fresh", batch))])
            for rollout in drawn:
                if rollout.reward < 0.5 and len(parents) < parents_needed:
                    parents.append(rollout)
                else:
                    fresh.append(rollout)
            batch += 1
            if len(parents) == parents_needed and len(fresh) >= base_size:
                break
        if len(parents) < parents_needed:  # no failure to reset from: one plain group of 8 (the code's fallback)
            top_up = max(0, 8 - len(fresh) - len(parents))
            (extra,) = source.sample([SampleRequest(problem, index, top_up, (index, "fallback"))])
            return [Group("fallback", (fresh + parents + extra)[:8], index)]
        groups = [Group("base", fresh[:base_size], index)] if base_size else []
        for number, parent in enumerate(parents):
            steps = parent_steps(source.policy, parent, self.config)
            step = self.reset_step(source, problem, parent, (index, "localise", number))
            prefix = parent.completion_ids[: steps[step - 1][0]]
            parent.info.update(reset_step=step, reset_steps=len(steps), prefix_tokens=len(prefix))
            entropies = parent.info.get("entropies")
            request = SampleRequest(
                problem,
                index,
                suffixes,
                (index, "reset", number),
                tuple(prefix),
                None if entropies is None else tuple(entropies),
            )
            (rollouts,) = source.sample([request])
            for rollout in rollouts:
                rollout.info.update(reset_step=step, reset_steps=len(steps), prefix_tokens=len(prefix))
            groups.append(Group("reset", rollouts, index, parent=parent))
        return groups

    @abstractmethod
    def reset_step(self, source: RolloutSource, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        """The 1-based step of ``parent`` (``parent.info["reset_step_chars"]``) to resample from; the steps
        before it are kept."""

    def advantages(self, groups: list[Group], scorer: CreditScorer) -> None:
        broadcast_group_advantages(groups)

    def step_metrics(self, groups: list[Group]) -> dict[str, float]:
        """Of the step's reset groups: how many, the share that started from an empty prefix (the question
        alone, i.e. four more fresh samples), the chance a uniform reset has of that (mean 1/H), and the mean
        share of the parent's tokens kept."""
        parents = [g.parent for g in groups if g.name == "reset" and g.parent is not None]
        if not parents:
            return {"reset_groups": 0}
        kept = [p.info["prefix_tokens"] / max(len(p.completion_ids), 1) for p in parents]
        return {
            "reset_groups": len(parents),
            "reset_empty_prefix_share": float(np.mean([p.info["prefix_tokens"] == 0 for p in parents])),
            "reset_prefix_fraction": float(np.mean(kept)),
            "reset_steps_mean": float(np.mean([p.info["reset_steps"] for p in parents])),
            "reset_uniform_empty_chance": float(np.mean([1 / p.info["reset_steps"] for p in parents])),
        }
