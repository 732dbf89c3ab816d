"""``srpo``: reset a failed chain where the policy localises its own first error (arXiv 2605.25507, the L2
localisation prompt; code Ankur-Samanta/SRPO @ 67f4a26)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rredcot_viz.diagnosis.self_localize import SelfLocalize, parse_localisation
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.settings import setting
from rredcot_viz.training.config import method_setting
from rredcot_viz.training.methods.base import RolloutSource, methods
from rredcot_viz.training.methods.resets import ResetConfig, ResetMethod
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.task import Problem


@dataclass(frozen=True)
class SRPOConfig(ResetConfig):
    method: str = method_setting("srpo")
    localizer_temperature: float = setting(0.3, "sampling temperature of the self-localisation (1x8: 0)", low=0.0,
                                           advanced=True)  # fmt: skip
    localizer_max_tokens: int = setting(128, "longest localisation reply, in tokens", low=1, advanced=True)


@methods.register("srpo")
class SRPO(ResetMethod):
    name = "srpo"
    Config = SRPOConfig
    provenance = "SRPO (arXiv 2605.25507): reset where the policy localises its own first error"
    config: SRPOConfig

    def reset_step(self, source: RolloutSource, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        config = self.config
        temperature = 0.0 if config.layout == "1x8" else config.localizer_temperature
        localiser = SelfLocalize(
            variant="l2",
            temperature=temperature,
            max_new_tokens=config.localizer_max_tokens,
            seed=int(source.rng(*key).integers(2**31)),
        )
        spans = parent.info["segment_chars"]  # the last step runs to the end: the localiser sees the answer too
        steps = [parent.text[a : (b if i < len(spans) - 1 else len(parent.text))] for i, (a, b) in enumerate(spans)]
        sampling = SamplingConfig(
            temperature=temperature,
            top_p=config.top_p,
            max_new_tokens=config.localizer_max_tokens,
            stop_on_answer=True,
            batch_size=16,
        )
        policy = source.policy
        prompt = localiser.prompt_ids(policy, problem.question, steps, problem.answer)
        reply = policy.sample([prompt], [localiser.config.seed], sampling).generations[0].text
        step = parse_localisation(reply, len(steps), allow_none=False)
        parent.info["localiser_reply"] = reply[-300:]
        return int(np.clip(step, 1, len(steps)))
