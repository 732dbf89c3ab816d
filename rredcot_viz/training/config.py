"""Trainer configuration and its presets (METHOD.md §9.6: ``quick`` for short refinements, ``paper``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.coupling import COUPLING_MODES
from rredcot_viz.segmenters import segmenters

LAYOUTS = ("1x4", "2x4", "1x8")
LOSSES = ("ppo_clip", "reinforce")


@dataclass(frozen=True)
class TrainConfig:
    method: str = "grpo"
    steps: int = 30
    prompts_per_step: int = 1
    group_size: int = 8  # G for grpo / rredcot; rrpo / srpo use the layout's budget of 8
    layout: str = "1x4"  # rrpo / srpo: 4 base + 1 prefix x 4, 0 + 2 x 4, or 0 + 1 x 8
    loss: str = "ppo_clip"  # METHOD.md §5: the PPO clipped surrogate, token mean; "reinforce" = SRPO's form
    clip_eps: float = 0.2
    kl_beta: float = 0.0
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    lora_rank: int = 16
    lora_alpha: int = 16
    lora_targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    full_finetune: bool = False
    temperature: float = 0.7
    top_p: float = 0.95
    max_new_tokens: int = 48
    # RREDCoT credit
    coupling: str = "value_baseline"  # METHOD.md §5 revision: Q-hat as a critic; a / b / c stay available
    coupling_lambda: float = 1.0
    gae_lambda: float = 1.0  # value_baseline: 1 keeps sign consistency with the outcome, < 1 sharpens credit
    segments: int = 4  # K for the K-targeting segmenters
    segmenter: str = "hybrid"  # the analyzer's default, fed the entropies recorded while sampling
    step_delimiter: str = "</thought>"  # a completion with it is cut into its thoughts (the RRPO/SRPO MDP)
    credit_scope: str = "reasoning"  # METHOD.md §5: segments cover the reasoning; the answer line takes the last's
    estimator: str = "rredcot"
    estimator_options: dict = field(default_factory=dict)
    # resets
    localizer_temperature: float = 0.3
    localizer_max_tokens: int = 128
    max_fresh_attempts: int = 12
    # bookkeeping
    seed: int = 0
    eval_every: int = 5
    eval_problems: int = 32
    eval_samples: int = 2
    checkpoint_every: int = 10
    keep_rollouts_every: int = 1

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ConfigError(f"layout must be one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        if self.loss not in LOSSES:
            raise ConfigError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.steps < 1 or self.prompts_per_step < 1 or self.group_size < 2:
            raise ConfigError("steps and prompts_per_step must be >= 1 and group_size >= 2 (a group needs a baseline)")
        if self.coupling not in COUPLING_MODES or not 0 <= self.coupling_lambda <= 1:
            raise ConfigError(f"coupling must be one of {', '.join(COUPLING_MODES)} and coupling_lambda in [0, 1]")
        if not 0 <= self.gae_lambda <= 1:
            raise ConfigError(f"gae_lambda must be in [0, 1], got {self.gae_lambda}")
        if self.segmenter not in segmenters.names() or self.segmenter in ("given", "steps"):
            names = ", ".join(n for n in segmenters.names() if n not in ("given", "steps"))
            raise ConfigError(f"segmenter must be a text segmenter ({names}), got {self.segmenter!r}")
        if self.credit_scope not in ("reasoning", "whole"):
            raise ConfigError(f"credit_scope must be 'reasoning' or 'whole', got {self.credit_scope!r}")
        if self.learning_rate <= 0 or self.lora_rank < 1:
            raise ConfigError("learning_rate must be > 0 and lora_rank >= 1")


def quick(**overrides) -> TrainConfig:
    """Short online refinements of a small model on a CPU or one GPU (METHOD.md §9.6 'quick': 4 prompts x 8
    rollouts, LoRA rank 16, lr 5e-5); on 2 CPU cores this project uses 1 prompt x 8 rollouts (about 8 s a
    step). Not chosen by a sweep of prompts per step: that measurement is still open (README, Training)."""
    return replace(TrainConfig(), **overrides)


def paper(**overrides) -> TrainConfig:
    """The SRPO paper's settings (arXiv 2605.25507 §9.6): 32 prompts x 8 rollouts, LoRA rank 64, lr 5e-5."""
    return replace(
        TrainConfig(
            prompts_per_step=32,
            group_size=8,
            lora_rank=64,
            lora_alpha=64,
            max_new_tokens=5120,
            localizer_max_tokens=4096,
            steps=24,
        ),
        **overrides,
    )


PRESETS = {"quick": quick, "paper": paper}
