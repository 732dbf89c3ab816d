"""Training configs (training/config.py, training/presets.py): bad settings are refused by name; the credit
settings are one ``CreditConfig`` inside each method's config, set by their own names or whole; runs stored
with the former flat settings load; the ``train`` options and their errors are those of before."""

from __future__ import annotations

import argparse
from dataclasses import asdict

import pytest

from rredcot_viz.cli.options import add_settings_arguments, settings_from_args
from rredcot_viz.errors import ConfigError
from rredcot_viz.settings import specs
from rredcot_viz.training import CreditConfig, config_for, methods, quick, stored_train_config
from rredcot_viz.training.config import SEGMENTATION
from rredcot_viz.training.methods.grpo import GRPOConfig
from rredcot_viz.training.methods.rredcot import RREDCoTGRPOConfig


def test_bad_configs_are_refused():
    with pytest.raises(ConfigError, match="layout must be one of 1x4, 2x4, 1x8, got '3x3'"):
        config_for("srpo", layout="3x3")
    with pytest.raises(ConfigError, match=r"group_size must be in \[2, \.\.\.\], got 1"):
        config_for("grpo", group_size=1)
    with pytest.raises(ConfigError, match="method 'grpo' has no setting coupling; its settings are: method, steps"):
        config_for("grpo", coupling="a")
    with pytest.raises(ConfigError, match=r"coupling_lambda must be in \[0, 1\], got 2"):
        config_for("rredcot", coupling_lambda=2.0)
    with pytest.raises(ConfigError, match="GRPOConfig does not use credit.coupling .*default 'value_baseline'"):
        GRPOConfig(credit=CreditConfig(coupling="a"))
    with pytest.raises(ConfigError, match="method must be one of rredcot, got 'grpo'"):
        RREDCoTGRPOConfig(method="grpo")


def test_credit_settings_are_one_config_set_by_name_or_whole():
    by_name = config_for("rredcot", k=3, coupling="b", gae_lambda=0.5, steps=2)
    whole = config_for("rredcot", credit=CreditConfig(k=3, coupling="b", gae_lambda=0.5), steps=2)
    assert by_name == whole and by_name.credit == CreditConfig(k=3, coupling="b", gae_lambda=0.5)
    assert config_for("rredcot", credit=CreditConfig(k=3), coupling="c").credit == CreditConfig(k=3, coupling="c")
    assert config_for("srpo", k=6).credit.k == 6  # every method reads the segmentation
    assert config_for("rredcot", segments=5).credit.k == 5  # K's former name still works
    grpo_settings = [s.name for s in specs(GRPOConfig) if s.path == ("credit",)]
    assert grpo_settings == list(SEGMENTATION)
    rredcot_settings = [s.name for s in specs(RREDCoTGRPOConfig) if s.path == ("credit",)]
    assert rredcot_settings == [s.name for s in specs(CreditConfig)]


def test_runs_stored_with_the_former_flat_settings_load():
    base = {k: v for k, v in asdict(config_for("rredcot", steps=5)).items() if k != "credit"}
    flat = {**base, "segments": 3, "credit_scope": "whole", "coupling": "a", "coupling_lambda": 0.5}
    loaded = stored_train_config(flat)
    assert loaded.credit == CreditConfig(k=3, credit_scope="whole", coupling="a", coupling_lambda=0.5)
    assert loaded.steps == 5 and type(loaded) is RREDCoTGRPOConfig
    srpo = {**{k: v for k, v in asdict(config_for("srpo")).items() if k != "credit"}, "segmenter": "line"}
    assert stored_train_config(srpo).credit.segmenter == "line"
    current = config_for("rredcot", k=2, estimator_options={"trigger": "="})
    assert stored_train_config(asdict(current)) == current


def test_the_train_options_are_flat_and_checked_per_method():
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_settings_arguments(parser, {name: methods.get(name).Config for name in methods.names()})
    args = parser.parse_args(["--k", "3", "--coupling", "a", "--coupling-lambda", "0.5"])
    given = settings_from_args(args, RREDCoTGRPOConfig)
    assert given == {"k": 3, "coupling": "a", "coupling_lambda": 0.5}
    assert settings_from_args(parser.parse_args(["--segments", "3"]), RREDCoTGRPOConfig) == {"k": 3}  # former flag
    k = next(a for a in parser._actions if "--k" in a.option_strings)
    assert k.option_strings[0] == "--k" and "--segments, --reset-steps: former names, deprecated" in k.help
    assert config_for("rredcot", **given).credit == CreditConfig(k=3, coupling="a", coupling_lambda=0.5)
    with pytest.raises(ConfigError, match="--coupling is not a setting of GRPO"):
        settings_from_args(args, GRPOConfig)
    coupling = next(a for a in parser._actions if "--coupling" in a.option_strings)
    assert "[rredcot]" in coupling.help and coupling.choices == ["value_baseline", "a", "b", "c"]
    method = next(a for a in parser._actions if "--method" in a.option_strings)
    assert sorted(method.choices) == sorted(methods.names())


def test_the_quick_preset_checkpoints_often_enough_to_stop_and_resume():
    config = quick("grpo")
    assert 0 < config.checkpoint_every < config.steps and config.steps % config.checkpoint_every == 0
    assert 0 < config.eval_every <= config.steps


def test_runs_stored_under_ks_former_names_resume_with_their_values():
    """K was ``segments`` in the credit settings and ``reset_steps`` in a reset method's; a run stored with either
    loads with its value under ``k``, and a reset method's own ``reset_steps`` wins over its credit's segments."""
    srpo = {k: v for k, v in asdict(config_for("srpo", steps=3)).items() if k != "credit"}
    old_srpo = {**srpo, "reset_steps": 7, "credit": {**asdict(CreditConfig()), "segments": 4}}
    del old_srpo["credit"]["k"]
    loaded = stored_train_config(old_srpo)
    assert loaded.credit.k == 7 and loaded.steps == 3
    rredcot = {k: v for k, v in asdict(config_for("rredcot")).items() if k != "credit"}
    old_credit = {k: v for k, v in asdict(CreditConfig(coupling="b")).items() if k != "k"}
    assert stored_train_config({**rredcot, "credit": {**old_credit, "segments": 3}}).credit == CreditConfig(
        k=3, coupling="b"
    )
    assert config_for("rrpo").credit.k == 5 and config_for("grpo").credit.k == 4  # each method's own default
    assert config_for("rrpo", reset_steps=6).credit.k == 6  # the former name still works when building one
