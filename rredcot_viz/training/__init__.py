"""The built-in trainer: short online RL refinements with GRPO, RREDCoT-GRPO, RRPO and SRPO."""

from rredcot_viz.training.config import PRESETS, TrainConfig, config_for, paper, quick
from rredcot_viz.training.methods import methods
from rredcot_viz.training.task import Problem, builtin_problems, builtin_split, problems_from_traces
from rredcot_viz.training.trainer import Trainer, latest_checkpoint

__all__ = [
    "PRESETS",
    "Problem",
    "TrainConfig",
    "Trainer",
    "builtin_problems",
    "builtin_split",
    "config_for",
    "latest_checkpoint",
    "methods",
    "paper",
    "problems_from_traces",
    "quick",
]
