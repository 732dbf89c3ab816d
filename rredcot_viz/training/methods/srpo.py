"""``srpo``: reset a failed chain where the policy localises its own first error (arXiv 2605.25507, the L2
localisation prompt; code Ankur-Samanta/SRPO @ 67f4a26).

The localiser samples its reply without stop strings (an early "the answer is" or box does not end it) and
the step is read from the reply's last ``\\boxed{}`` (docs/method.md §8.1). A reply whose last box names no step
is read by the remaining rules (the last "Step N"), and one that names none at all gets the fallback step:
``localizer_fallback`` ``random`` (RRPO's uniform draw, default: the reset then still lands inside the parent)
or ``first`` (step 1, the empty prefix, as the official code). Each parent records its reply and the rule
used, and the step's metrics count them (``localiser_parse_rate``: share of replies whose last box named a
step; ``localiser_fallback_share``: share that got the fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from rredcot_viz.diagnosis.self_localize import PARSE_FALLBACKS, SelfLocalize, parse_localisation_detailed
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.settings import setting
from rredcot_viz.training.config import method_setting
from rredcot_viz.training.methods.base import RolloutSource, methods
from rredcot_viz.training.methods.resets import ResetConfig, ResetMethod
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import Problem

Fallback = Literal["random", "first"]
FALLBACKS: tuple[Fallback, ...] = get_args(Fallback)


@dataclass(frozen=True)
class SRPOConfig(ResetConfig):
    method: str = method_setting("srpo")
    localizer_temperature: float = setting(0.3, "sampling temperature of the self-localisation (1x8: 0)", low=0.0,
                                           advanced=True)  # fmt: skip
    localizer_max_tokens: int = setting(256, "longest localisation reply, in tokens (sampled without stop strings)",
                                        low=1, advanced=True)  # fmt: skip
    localizer_fallback: Fallback = setting("random", "step when the reply names none: random (RRPO's uniform draw) "
                                           "or first (the empty prefix, the official code)", advanced=True)  # fmt: skip


@methods.register("srpo")
class SRPO(ResetMethod):
    name = "srpo"
    Config = SRPOConfig
    provenance = "SRPO (arXiv 2605.25507): reset where the policy localises its own first error"
    config: SRPOConfig

    def reset_step(self, source: RolloutSource, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        config = self.config
        temperature = 0.0 if config.layout == "1x8" else config.localizer_temperature
        rng = source.rng(*key)
        localiser = SelfLocalize(
            variant="l2", temperature=temperature, max_new_tokens=config.localizer_max_tokens,
            seed=int(rng.integers(2**31)),
        )  # fmt: skip
        spans = parent.info["reset_step_chars"]  # the last step runs to the end: the localiser sees the answer too
        steps = [parent.text[a : (b if i < len(spans) - 1 else len(parent.text))] for i, (a, b) in enumerate(spans)]
        sampling = SamplingConfig(
            temperature=temperature,
            top_p=config.top_p,
            max_new_tokens=config.localizer_max_tokens,
            stop_on_answer=False,
            batch_size=16,
        )
        policy = source.policy
        prompt = localiser.prompt_ids(policy, problem.question, steps, problem.answer)
        reply = policy.sample([prompt], [localiser.config.seed], sampling).generations[0].text
        step, rule = parse_localisation_detailed(reply, len(steps), allow_none=False)
        if rule in PARSE_FALLBACKS:
            step = int(rng.integers(1, len(steps) + 1)) if config.localizer_fallback == "random" else 1
        parent.info.update(localiser_reply=reply[-300:], localiser_rule=rule)
        return int(np.clip(step, 1, len(steps)))

    def step_metrics(self, groups: list[Group]) -> dict[str, float]:
        metrics = super().step_metrics(groups)
        rules = [g.parent.info["localiser_rule"] for g in groups if g.name == "reset" and g.parent is not None]
        if rules:
            metrics["localiser_parse_rate"] = float(np.mean([rule in ("boxed", "boxed_none") for rule in rules]))
            metrics["localiser_fallback_share"] = float(np.mean([rule in PARSE_FALLBACKS for rule in rules]))
        return metrics
