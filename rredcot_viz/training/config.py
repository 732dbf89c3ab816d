"""The shared loop's settings (every method's) and the presets; each method's own settings live in a
``TrainConfig`` subclass beside it (``training/methods/<method>.py``), as TRL keeps a config per trainer.

``config_for("rredcot", steps=10)`` builds the named method's config; ``quick`` and ``paper`` are presets
(METHOD.md §9.6). Every field is a ``setting``: the CLI's ``train`` options and the Train page's form are
generated from these declarations.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rredcot_viz.errors import ConfigError
from rredcot_viz.segmenters import segmenters
from rredcot_viz.settings import Settings, from_stored, setting

LOSSES = ("ppo_clip", "reinforce")
SCOPES = ("reasoning", "whole")


def _text_segmenters() -> list[str]:
    return [name for name in segmenters.names() if name not in ("given", "steps")]


def _methods() -> list[str]:
    from rredcot_viz.training.methods import methods

    return methods.names()


def method_setting(name: str) -> Any:
    """The ``method`` field of a method's config subclass, defaulting to that method."""
    return setting(name, "training method (each adds its own settings)", choices=_methods)


@dataclass(frozen=True)
class TrainConfig(Settings):
    method: str = method_setting("grpo")
    steps: int = setting(30, "training steps (with a resume: train up to this step)", low=1)
    prompts_per_step: int = setting(1, "problems drawn per step, each with its own group of rollouts", low=1)
    group_size: int = setting(8, "rollouts per problem (G); a group needs at least 2 for a baseline", low=2)
    loss: str = setting("ppo_clip", "PPO clipped surrogate with a token mean (METHOD.md §5), or SRPO's REINFORCE",
                        choices=LOSSES)  # fmt: skip
    clip_eps: float = setting(0.2, "PPO clip range", low=0.0, high=1.0, advanced=True)
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
    segmenter: str = setting("hybrid", "how each rollout is cut into segments (the analyzer's segmenters)",
                             choices=_text_segmenters, advanced=True)  # fmt: skip
    segments: int = setting(4, "K for the segmenters that target a count", low=1, advanced=True)
    step_delimiter: str = setting("</thought>", "a completion that uses it is cut into its thoughts (RRPO/SRPO MDP)",
                                  advanced=True)  # fmt: skip
    credit_scope: str = setting("reasoning", "segments cover the reasoning (the answer line takes the last one's "
                                "credit) or the whole completion", choices=SCOPES, advanced=True)  # fmt: skip
    seed: int = setting(0, "seed of every random choice (problems, rollouts, resets)")
    eval_every: int = setting(5, "evaluate on the held-out problems every N steps (0 = never)", low=0)
    eval_problems: int = setting(32, "held-out problems", low=1)
    eval_samples: int = setting(2, "sampled answers per held-out problem", low=1, advanced=True)
    checkpoint_every: int = setting(10, "checkpoint every N steps (0 = only at the end)", low=0, advanced=True)
    keep_rollouts_every: int = setting(1, "store the rollouts of every N-th step for the inspector (0 = none)",
                                       low=0, advanced=True)  # fmt: skip


def method_config_type(method: str) -> type[TrainConfig]:
    from rredcot_viz.training.methods import methods

    return methods.get(method).Config


def config_for(method: str = "grpo", **settings: Any) -> TrainConfig:
    """The named method's config; a setting it does not have names the ones it has."""
    config_type = method_config_type(method)
    known = [f.name for f in fields(config_type)]
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ConfigError(
            f"method {method!r} has no setting {', '.join(unknown)}; its settings are: {', '.join(known)}"
        )
    return config_type(**{**settings, "method": method})


def stored_train_config(saved: dict[str, Any]) -> TrainConfig:
    """A run's config from its stored JSON, as its method's config type."""
    return from_stored(method_config_type(saved.get("method", "grpo")), saved)


def quick(method: str = "grpo", **overrides: Any) -> TrainConfig:
    """Short online refinements on a CPU or one GPU (METHOD.md §9.6 'quick': LoRA rank 16, lr 5e-5, 8 rollouts
    per problem), 4 problems per step for 8 steps: at an equal budget of 240 rollouts on 2 cores, 4 prompts per
    step gained the most held-out accuracy per minute (mean of 2 seeds) and cost 1.6x less per rollout than 1
    (bench/quick_preset.py, README Training). A checkpoint every 2 steps, so a run stopped early can be resumed
    and compared before and after."""
    settings = {"prompts_per_step": 4, "steps": 8, "eval_every": 4, "checkpoint_every": 2}
    return config_for(method, **{**settings, **overrides})


def paper(method: str = "grpo", **overrides: Any) -> TrainConfig:
    """The SRPO paper's settings (arXiv 2605.25507 §9.6): 32 prompts x 8 rollouts, LoRA rank 64, lr 5e-5."""
    settings: dict[str, Any] = dict(
        prompts_per_step=32, group_size=8, lora_rank=64, lora_alpha=64, max_new_tokens=5120, steps=24
    )
    if "localizer_max_tokens" in {f.name for f in fields(method_config_type(method))}:
        settings["localizer_max_tokens"] = 4096
    return config_for(method, **{**settings, **overrides})


PRESETS = {"quick": quick, "paper": paper}
