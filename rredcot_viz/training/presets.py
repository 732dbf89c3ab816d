"""A method's config by name, and the presets: ``config_for("rredcot", steps=10)`` builds the named method's
config (credit settings by their own names, ``k=3``, or whole, ``credit=CreditConfig(...)``); ``quick``
and ``paper`` are presets (docs/method.md §9.6)."""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import ConfigError
from rredcot_viz.settings import current_names, from_settings, from_stored, setting_names
from rredcot_viz.training.config import DEFAULT_METHOD, TrainConfig
from rredcot_viz.training.methods import methods


def method_config_type(method: str) -> type[TrainConfig]:
    return methods.get(method).Config


def config_for(method: str = DEFAULT_METHOD, **settings: Any) -> TrainConfig:
    """The named method's config (a setting's former name, such as ``segments``, still works); a setting it does
    not have names the ones it has."""
    config_type = method_config_type(method)
    settings = current_names(config_type, settings)
    known = setting_names(config_type)
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ConfigError(
            f"method {method!r} has no setting {', '.join(unknown)}; its settings are: {', '.join(known)}"
        )
    return from_settings(config_type, {**settings, "method": method})


def stored_train_config(saved: dict[str, Any]) -> TrainConfig:
    """A run's config from its stored JSON, as its method's config type (runs stored before the credit settings
    moved into ``credit`` load too)."""
    return from_stored(method_config_type(saved.get("method", DEFAULT_METHOD)), saved)


def quick(method: str = DEFAULT_METHOD, **overrides: Any) -> TrainConfig:
    """Short online refinements on a CPU or one GPU (docs/method.md §9.6 'quick': LoRA rank 16, lr 5e-5, 8 rollouts
    per problem), 4 problems per step for 8 steps: at an equal budget of 240 rollouts on 2 cores, 4 prompts per
    step gained the most held-out accuracy per minute (mean of 2 seeds) and cost 1.6x less per rollout than 1
    (bench/quick_preset.py, docs/BENCHES.md, Quick preset). A checkpoint every 2 steps, so a run stopped early
    can be resumed and compared before and after."""
    settings = {"prompts_per_step": 4, "steps": 8, "eval_every": 4, "checkpoint_every": 2}
    return config_for(method, **{**settings, **overrides})


def paper(method: str = DEFAULT_METHOD, **overrides: Any) -> TrainConfig:
    """The SRPO paper's settings (arXiv 2605.25507 §9.6): 32 prompts x 8 rollouts, LoRA rank 64, lr 5e-5; SRPO's
    localiser falls back to step 1 as the official code. The loss is each method's default in every preset: the
    PPO clipped surrogate (token mean) for GRPO and RREDCoT-GRPO, the sequence-mean REINFORCE loss for SRPO and
    RRPO (docs/method.md §9.4)."""
    settings: dict[str, Any] = dict(
        prompts_per_step=32, group_size=8, lora_rank=64, lora_alpha=64, max_new_tokens=5120, steps=24
    )
    if "localizer_max_tokens" in setting_names(method_config_type(method)):
        settings.update(localizer_max_tokens=4096, localizer_fallback="first")
    return config_for(method, **{**settings, **overrides})


PRESETS = {"quick": quick, "paper": paper}
