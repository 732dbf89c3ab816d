"""The built-in trainer: short online RL refinements with GRPO, RREDCoT-GRPO, RRPO and SRPO."""

from rredcot_viz.training.config import DEFAULT_METHOD, CreditConfig, TrainConfig
from rredcot_viz.training.methods import methods
from rredcot_viz.training.presets import PRESETS, config_for, method_config_type, paper, quick, stored_train_config
from rredcot_viz.training.task import Problem, builtin_problems, builtin_split, problems_from_traces
from rredcot_viz.training.trainer import Trainer, latest_checkpoint

__all__ = [
    "DEFAULT_METHOD",
    "PRESETS",
    "CreditConfig",
    "Problem",
    "TrainConfig",
    "Trainer",
    "builtin_problems",
    "builtin_split",
    "config_for",
    "latest_checkpoint",
    "method_config_type",
    "methods",
    "paper",
    "problems_from_traces",
    "quick",
    "stored_train_config",
]
