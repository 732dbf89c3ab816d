"""The trainer's settings: ``CreditConfig`` (how a rollout is segmented and credited, the same object the TRL
plug-in takes) and ``TrainConfig``, the shared loop's settings with the credit settings inside it; each
method's own settings live in a ``TrainConfig`` subclass beside it (``training/methods/<method>.py``), as TRL
keeps a config per trainer. ``training.presets`` builds a method's config by name (``config_for``, ``quick``,
``paper``).

Every field is a ``setting``: the CLI's ``train`` options and the Train page's form are generated from these
declarations (the credit settings under their own names: ``--k``, ``--coupling``...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from rredcot_viz.estimators import DEFAULT_ESTIMATOR, credit_estimators
from rredcot_viz.estimators.coupling import CouplingMode
from rredcot_viz.segmenters import DEFAULT_SEGMENTER, text_segmenters
from rredcot_viz.settings import Settings, nested, setting

Loss = Literal["ppo_clip", "reinforce"]
CreditScope = Literal["reasoning", "whole"]
LOSSES: tuple[Loss, ...] = get_args(Loss)
SCOPES: tuple[CreditScope, ...] = get_args(CreditScope)
SEGMENTATION = ("segmenter", "k", "step_delimiter", "credit_scope")  # what every method reads of CreditConfig
DEFAULT_METHOD = "grpo"  # the plain baseline every other method is measured against (docs/method.md §9.6)


@dataclass(frozen=True)
class CreditConfig(Settings):
    """How RREDCoT credits a rollout (docs/method.md §5): segmentation, the value estimator, and the coupling of its
    sigma to token advantages. Methods without step credit read only the segmentation (``SEGMENTATION``)."""

    renamed: ClassVar[dict[str, str]] = {"segments": "k"}  # K's name before every config called it k

    segmenter: str = setting(DEFAULT_SEGMENTER, "how each rollout is cut into segments (the analyzer's segmenters)",
                             choices=text_segmenters, advanced=True)  # fmt: skip
    k: int = setting(4, "K for the segmenters that target a count (a reset method's: the steps a failed parent is "
                     "cut into)", low=1, advanced=True)  # fmt: skip
    step_delimiter: str = setting("</thought>", "a completion that uses it is cut into its thoughts (RRPO/SRPO MDP)",
                                  advanced=True)  # fmt: skip
    credit_scope: CreditScope = setting("reasoning", "segments cover the reasoning (the answer line takes the last "
                                        "one's credit) or the whole completion", advanced=True)  # fmt: skip
    coupling: CouplingMode = setting("value_baseline", "how sigma becomes token advantages (docs/method.md §5; the "
                                     "revision's default keeps the outcome's sign)")  # fmt: skip
    coupling_lambda: float = setting(1.0, "weight of the redistributed advantage against GRPO's (0 = GRPO)",
                                     low=0.0, high=1.0)  # fmt: skip
    gae_lambda: float = setting(1.0, "value_baseline: 1 keeps sign consistency with the outcome, < 1 sharpens "
                                "credit toward the decisive segment", low=0.0, high=1.0)  # fmt: skip
    estimator: str = setting(DEFAULT_ESTIMATOR, "value estimator of the states (R-hat alone, answer_only, for a "
                             "problem without a reference solution; recorded per rollout)", choices=credit_estimators,
                             advanced=True)  # fmt: skip
    estimator_options: dict = setting({}, "the estimator's own settings, as JSON", advanced=True)


def credit_setting(*, only: tuple[str, ...] | None = SEGMENTATION, start: CreditConfig | None = None) -> Any:
    """The ``credit`` field of a method's config: the segmentation settings only (default), or every credit
    setting (``only=None``, for a method that assigns step credit); ``start``: the method's own defaults."""
    return nested(CreditConfig, "segmentation and step credit", only=only, start=start)


def method_setting(name: str) -> Any:
    """The ``method`` field of a method's config subclass: that method's name, the only one its config takes."""
    return setting(name, "training method (each adds its own settings)", choices=(name,))


@dataclass(frozen=True)
class TrainConfig(Settings):
    method: str = setting(DEFAULT_METHOD, "training method (each adds its own settings)")
    steps: int = setting(30, "training steps (with a resume: train up to this step)", low=1)
    prompts_per_step: int = setting(1, "problems drawn per step, each with its own group of rollouts", low=1)
    group_size: int = setting(8, "rollouts per problem (G); a group needs at least 2 for a baseline", low=2)
    loss: Loss = setting("ppo_clip", "PPO clipped surrogate with a token mean (docs/method.md §5), or SRPO's "
                         "REINFORCE (sequence mean of token means)")  # fmt: skip
    clip_eps: float = setting(0.2, "PPO clip range", low=0.0, high=1.0, advanced=True)
    ppo_epochs: int = setting(1, "optimiser steps on each step's rollouts; the PPO ratio is to the policy that "
                              "sampled them, so with 1 it is 1 and the clip never binds", low=1,
                              advanced=True)  # fmt: skip
    kl_beta: float = setting(0.0, "weight of the KL penalty to the starting policy (0 = off)", low=0.0, advanced=True)
    learning_rate: float = setting(5e-5, "AdamW learning rate", low=1e-9)
    weight_decay: float = setting(0.01, "AdamW weight decay", low=0.0, advanced=True)
    grad_clip: float = setting(1.0, "gradient norm clip", low=0.0, advanced=True)
    lora_rank: int = setting(16, "LoRA rank", low=1, advanced=True)
    lora_alpha: int = setting(16, "LoRA alpha", low=1, advanced=True)
    lora_targets: tuple[str, ...] = setting(
        ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
        "module names LoRA adapts (comma-separated)",
        advanced=True,
    )
    full_finetune: bool = setting(False, "train every weight instead of LoRA adapters (tiny models)", advanced=True)
    temperature: float = setting(0.7, "sampling temperature of the rollouts", low=0.0)
    top_p: float = setting(0.95, "nucleus sampling mass", low=0.0, high=1.0, advanced=True)
    max_new_tokens: int = setting(48, "longest completion, in tokens", low=1)
    credit: CreditConfig = credit_setting()
    seed: int = setting(0, "seed of every random choice (problems, rollouts, resets)")
    eval_every: int = setting(5, "evaluate on the held-out problems every N steps (0 = never)", low=0)
    eval_problems: int = setting(32, "held-out problems", low=1)
    eval_samples: int = setting(2, "sampled answers per held-out problem", low=1, advanced=True)
    checkpoint_every: int = setting(10, "checkpoint every N steps (0 = only at the end)", low=0, advanced=True)
    keep_rollouts_every: int = setting(1, "store the rollouts of every N-th step for the inspector (0 = none)",
                                       low=0, advanced=True)  # fmt: skip
