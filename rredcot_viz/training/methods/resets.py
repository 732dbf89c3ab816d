"""``rrpo`` and ``srpo``: a base group plus a reset group sampled from the clean prefix of one failed
parent chain (METHOD.md §9, arXiv 2605.25507; code Ankur-Samanta/SRPO @ 67f4a26).

Phase 1 samples fresh chains (at most ``max_fresh_attempts``); the first failure becomes the parent (used
only to pick the reset point, never trained on) and the others fill the base group. Without any failure, all
chains form one plain GRPO group (the fallback). The reset step is uniform over the parent's segments (RRPO)
or the policy's own localisation of its first wrong step (SRPO, the L2 prompt). Continuations are sampled
from the original prompt plus the prefix; the prefix is masked out of the loss. Advantages are normalised
within each group (population std; an all-equal group gets zeros). Layouts, all with 8 trained rollouts:
1x4 (4 base + 1 prefix x 4, default), 2x4 (2 parents x 4), 1x8 (1 parent x 8, localiser at temperature 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.diagnosis.self_localize import SelfLocalize, parse_localisation
from rredcot_viz.training.methods.base import TrainingMethod, broadcast_group_advantages, methods
from rredcot_viz.training.rollouts import Group, TrainRollout

if TYPE_CHECKING:
    from rredcot_viz.training.loop import Trainer
    from rredcot_viz.training.task import Problem

LAYOUTS = {"1x4": (4, 1, 4), "2x4": (0, 2, 4), "1x8": (0, 1, 8)}  # base size, parents, suffixes per parent


class ResetMethod(TrainingMethod):
    def collect(self, trainer: Trainer, problem: Problem, index: int) -> list[Group]:
        base_size, parents_needed, suffixes = LAYOUTS[trainer.config.layout]
        fresh: list[TrainRollout] = []
        parents: list[TrainRollout] = []
        batch = 0
        while len(fresh) + len(parents) < trainer.config.max_fresh_attempts:
            for rollout in trainer.sample(problem, [], 4, key=(index, "fresh", batch)):
                if rollout.reward < 0.5 and len(parents) < parents_needed:
                    parents.append(rollout)
                else:
                    fresh.append(rollout)
            batch += 1
            if len(parents) == parents_needed and len(fresh) >= base_size:
                break
        if len(parents) < parents_needed:  # no failure to reset from: one plain group of 8 (the code's fallback)
            top_up = trainer.sample(problem, [], max(0, 8 - len(fresh) - len(parents)), key=(index, "fallback"))
            return [Group("fallback", (fresh + parents + top_up)[:8], index)]
        groups = [Group("base", fresh[:base_size], index)] if base_size else []
        for number, parent in enumerate(parents):
            step = self.reset_step(trainer, problem, parent, (index, "localise", number))
            prefix = parent.completion_ids[: parent.segments[step - 1][0]] if step > 1 else []
            rollouts = trainer.sample(
                problem, prefix, suffixes, key=(index, "reset", number), prefix_entropies=parent.info.get("entropies")
            )
            for rollout in rollouts:
                rollout.info.update(reset_step=step, reset_segments=len(parent.segments), prefix_tokens=len(prefix))
            groups.append(Group("reset", rollouts, index, parent=parent))
        return groups

    def reset_step(self, trainer: Trainer, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        raise NotImplementedError

    def advantages(self, trainer: Trainer, groups: list[Group]) -> None:
        broadcast_group_advantages(groups)


@methods.register("rrpo")
class RRPO(ResetMethod):
    name = "rrpo"
    provenance = "RRPO (arXiv 2605.25507): reset at a uniformly random step of a failed chain"

    def reset_step(self, trainer: Trainer, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        return int(trainer.rng(*key).integers(1, len(parent.segments) + 1))


@methods.register("srpo")
class SRPO(ResetMethod):
    name = "srpo"
    provenance = "SRPO (arXiv 2605.25507): reset where the policy localises its own first error"

    def reset_step(self, trainer: Trainer, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        config = trainer.config
        temperature = 0.0 if config.layout == "1x8" else config.localizer_temperature
        localiser = SelfLocalize(
            variant="l2",
            temperature=temperature,
            max_new_tokens=config.localizer_max_tokens,
            seed=int(trainer.rng(*key).integers(2**31)),
        )
        spans = parent.info["segment_chars"]  # the last step runs to the end: the localiser sees the answer too
        steps = [parent.text[a : (b if i < len(spans) - 1 else len(parent.text))] for i, (a, b) in enumerate(spans)]
        reply = (
            trainer.policy.sample(
                [localiser.prompt_ids(trainer.policy, problem.question, steps, problem.answer)],
                [localiser.config.seed],
                trainer.sampling(temperature, config.localizer_max_tokens),
            )
            .generations[0]
            .text
        )
        step = parse_localisation(reply, len(steps), allow_none=False)
        parent.info["localiser_reply"] = reply[-300:]
        return int(np.clip(step, 1, len(steps)))
