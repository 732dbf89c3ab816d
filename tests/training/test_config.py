"""Training configs (training/config.py): bad settings are refused by name."""

from __future__ import annotations

import pytest

from rredcot_viz.errors import ConfigError
from rredcot_viz.training import config_for
from rredcot_viz.training.config import quick


def test_bad_configs_are_refused():
    with pytest.raises(ConfigError, match="layout must be one of 1x4, 2x4, 1x8, got '3x3'"):
        config_for("srpo", layout="3x3")
    with pytest.raises(ConfigError, match=r"group_size must be in \[2, \.\.\.\], got 1"):
        config_for("grpo", group_size=1)
    with pytest.raises(ConfigError, match="method 'grpo' has no setting coupling; its settings are: method, steps"):
        config_for("grpo", coupling="a")


def test_the_quick_preset_checkpoints_often_enough_to_stop_and_resume():
    config = quick("grpo")
    assert 0 < config.checkpoint_every < config.steps and config.steps % config.checkpoint_every == 0
    assert 0 < config.eval_every <= config.steps
