"""What RRPO and SRPO share: a base group plus a reset group sampled from the clean prefix of one failed
parent chain (METHOD.md §9, arXiv 2605.25507; code Ankur-Samanta/SRPO @ 67f4a26). They differ only in where
the reset goes (``reset_step``).

Phase 1 samples fresh chains (at most ``max_fresh_attempts``, four at a time); the first failure becomes the
parent (used only to pick the reset point, never trained on) and the others fill the base group. Without any
failure, all chains form one plain GRPO group (the fallback). Continuations are sampled from the original
prompt plus the prefix; the prefix is masked out of the loss. Advantages are normalised within each group
(population std; an all-equal group gets zeros). Layouts, all with 8 trained rollouts: 1x4 (4 base + 1
prefix x 4, default), 2x4 (2 parents x 4), 1x8 (1 parent x 8, localiser at temperature 0).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass

from rredcot_viz.settings import setting
from rredcot_viz.training.config import TrainConfig
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
    layout: str = setting("1x4", "base group + reset groups: 4 + 1x4, 0 + 2x4 or 0 + 1x8 (8 trained rollouts)",
                          choices=tuple(LAYOUTS))  # fmt: skip
    max_fresh_attempts: int = setting(12, "fresh chains sampled at most while looking for a failed parent", low=1,
                                      advanced=True)  # fmt: skip


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
            step = self.reset_step(source, problem, parent, (index, "localise", number))
            prefix = parent.completion_ids[: parent.segments[step - 1][0]] if step > 1 else []
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
                rollout.info.update(reset_step=step, reset_segments=len(parent.segments), prefix_tokens=len(prefix))
            groups.append(Group("reset", rollouts, index, parent=parent))
        return groups

    @abstractmethod
    def reset_step(self, source: RolloutSource, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        """The 1-based segment of ``parent`` to resample from (the prefix before it is kept)."""

    def advantages(self, groups: list[Group], scorer: CreditScorer) -> None:
        broadcast_group_advantages(groups)
