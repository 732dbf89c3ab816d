"""Settings: one field declared with ``setting`` is validated, becomes a command-line option and a widget, with
no other edit. The toy config below adds one field to the hybrid segmenter's config."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Literal

import pytest
from streamlit.testing.v1 import AppTest

from rredcot_viz.cli.options import add_settings_arguments, settings_from_args
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.montecarlo import MonteCarloConfig
from rredcot_viz.estimators.rredcot import RREDCoTConfig
from rredcot_viz.segmenters.hybrid import HybridSegmenterConfig
from rredcot_viz.settings import (
    Settings,
    SettingSpec,
    from_settings,
    from_stored,
    nested,
    setting,
    setting_names,
    setting_value,
    specs,
    with_overrides,
)


@dataclass(frozen=True)
class WindowedHybridConfig(HybridSegmenterConfig):
    window: int = setting(4, "tokens either side of a boundary that its score reads", choices=(2, 4, 8))


def parser_for(*config_types: type) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toy", exit_on_error=False)
    add_settings_arguments(parser, {t.__name__.removesuffix("Config"): t for t in config_types}, prefix="seg")
    return parser


def test_an_added_field_is_an_option_with_its_help_choices_and_coercion(capsys):
    parser = parser_for(HybridSegmenterConfig, WindowedHybridConfig)
    option = next(a for a in parser._actions if "--seg-window" in a.option_strings)
    assert option.choices == ["2", "4", "8"]
    assert option.help == "tokens either side of a boundary that its score reads [WindowedHybrid] (default 4)"
    args = parser.parse_args(["--seg-window", "8", "--seg-k", "6"])
    assert settings_from_args(args, WindowedHybridConfig, prefix="seg") == {"window": 8, "k": 6}  # ints, not text
    assert WindowedHybridConfig(**settings_from_args(args, WindowedHybridConfig, prefix="seg")).window == 8
    with pytest.raises(ConfigError, match="--seg-window is not a setting of the hybrid segmenter; its settings: "
                                          "--seg-k, --seg-keywords, --seg-newlines, --seg-merge-score"):  # fmt: skip
        settings_from_args(args, HybridSegmenterConfig, prefix="seg", what="the hybrid segmenter")
    with pytest.raises(argparse.ArgumentError, match=r"invalid choice: '3' \(choose from '2', '4', '8'\)"):
        parser.parse_args(["--seg-window", "3"])
    untouched = parser.parse_args([])
    assert settings_from_args(untouched, WindowedHybridConfig, prefix="seg") == {}  # the defaults stay the config's


def test_a_value_that_breaks_a_range_is_a_clear_error_from_the_command_line():
    args = parser_for(WindowedHybridConfig).parse_args(["--seg-k", "300"])
    given = settings_from_args(args, WindowedHybridConfig, prefix="seg")
    with pytest.raises(ConfigError, match=r"k must be in \[1, 256\], got 300"):
        WindowedHybridConfig(**given)
    with pytest.raises(ConfigError, match="k needs an integer, got 'twelve'"):
        settings_from_args(parser_for(WindowedHybridConfig).parse_args(["--seg-k", "twelve"]), WindowedHybridConfig,
                           prefix="seg")  # fmt: skip


def form_script(config_type: type) -> None:
    import dataclasses

    import streamlit as st

    from rredcot_viz.ui.settings_form import settings_form

    start = dataclasses.replace(config_type(), window=st.session_state.get("start", 4))
    st.session_state["values"] = settings_form(config_type, "toy", initial=start)


def test_an_added_field_is_a_widget_with_its_help_choices_and_type():
    app = AppTest.from_function(form_script, kwargs={"config_type": WindowedHybridConfig}, default_timeout=60).run()
    assert not app.exception, [e.value for e in app.exception]
    window = app.selectbox(key="toy_window")
    assert window.label == "Window" and window.options == ["2", "4", "8"] and window.value == 4
    assert window.help == "tokens either side of a boundary that its score reads"
    assert app.text_input(key="toy_k").value == "12" and app.selectbox(key="toy_merge_score").value == "sum"
    assert app.text_input(key="toy_keywords").value.startswith("Wait,But,Alternatively")
    assert app.session_state["values"] == {
        "k": 12, "keywords": HybridSegmenterConfig().keywords, "newlines": True, "merge_score": "sum", "window": 4
    }  # fmt: skip
    window.select(8).run()
    app.text_input(key="toy_k").input("").run()
    values = app.session_state["values"]
    assert values["window"] == 8 and values["k"] is None  # typed back: an int, and None for an empty optional
    assert WindowedHybridConfig(**values).window == 8


def test_a_widget_follows_its_starting_value_until_the_user_changes_it():
    app = AppTest.from_function(form_script, kwargs={"config_type": WindowedHybridConfig}, default_timeout=60).run()
    app.session_state["start"] = 2
    app.run()
    assert app.selectbox(key="toy_window").value == 2  # untouched: follows the page's starting value
    app.selectbox(key="toy_window").select(8).run()
    app.session_state["start"] = 4
    app.run()
    assert app.selectbox(key="toy_window").value == 8 and app.session_state["values"]["window"] == 8


def test_settings_validate_choices_and_ranges():
    with pytest.raises(ConfigError, match="window must be one of 2, 4, 8, got 3"):
        WindowedHybridConfig(window=3)
    with pytest.raises(ConfigError, match="merge_score must be one of sum, boundary, got 'max'"):  # a Literal
        HybridSegmenterConfig(merge_score="max")  # type: ignore[arg-type]
    with pytest.raises(
        ConfigError,
        match=r"aggregation must be one of mean_prob, seq_prob, geo_mean, sum_logprob, "
        r"candidate_normalized, got 'median'",
    ):  # fmt: skip  (a registry)
        RREDCoTConfig(aggregation="median")
    assert RREDCoTConfig(aggregation="mean_token_prob").aggregation == "mean_prob"  # an alias, stored by name
    with pytest.raises(ConfigError, match=r"k must be in \[1, 256\], got 0"):
        HybridSegmenterConfig(k=0)
    with pytest.raises(ConfigError, match=r"top_p must be in \[0, 1\], got 1.5"):
        MonteCarloConfig(top_p=1.5)
    with pytest.raises(ConfigError, match=r"rollouts must be in \[1, \.\.\.\], got 0"):
        MonteCarloConfig(rollouts=0)
    assert HybridSegmenterConfig(k=None).k is None  # optional: None passes the range
    assert MonteCarloConfig(top_p=1.0, rollouts=1).rollouts == 1  # the ends of a range are inside it


def test_specs_resolve_kinds_choices_and_ownership():
    found = {spec.name: spec for spec in specs(WindowedHybridConfig)}
    assert list(found) == ["k", "keywords", "newlines", "merge_score", "window"]  # declaration order
    assert (found["k"].kind, found["k"].optional, found["k"].default, found["k"].low) == ("int", True, 12, 1)
    assert (found["merge_score"].kind, found["merge_score"].choices) == ("str", ("sum", "boundary"))
    assert found["keywords"].kind == "tuple" and found["newlines"].kind == "bool"
    assert found["window"].owner == "WindowedHybridConfig" and found["window"].choices == (2, 4, 8)

    @dataclass(frozen=True)
    class Unsupported(Settings):
        steps: list[int] = setting([1], "a list is not a setting kind")

    with pytest.raises(TypeError, match="a setting's type must be one of bool, int, float, str, tuple, dict"):
        specs(Unsupported)


def spec(kind: str, optional: bool = False) -> SettingSpec:
    return SettingSpec("x", kind, None, "", None, None, None, False, optional, "Toy")


@pytest.mark.parametrize(
    ("kind", "raw", "value"),
    [
        ("bool", "yes", True),
        ("bool", "0", False),
        ("int", " 12 ", 12),
        ("float", "1e-3", 0.001),
        ("tuple", "Wait, So,,Let me", ("Wait", "So", "Let me")),
        ("tuple", ["a", "b"], ("a", "b")),  # a widget's list
        ("dict", '{"aggregation": "geo_mean"}', {"aggregation": "geo_mean"}),
        ("dict", "", {}),
        ("str", "\\n\\n", "\n\n"),  # escapes are read
        ("str", " ки", " ки"),  # a leading space and non-Latin text are kept
        ("int", 7, 7),  # a widget's number passes through
    ],
)
def test_coerce_reads_each_kind(kind, raw, value):
    assert spec(kind).coerce(raw) == value


@pytest.mark.parametrize(
    ("kind", "raw", "message"),
    [
        ("bool", "maybe", "x needs true or false, got 'maybe'"),
        ("int", "1.5", "x needs an integer, got '1.5'"),
        ("float", "fast", "x needs a number, got 'fast'"),
        ("dict", "[1, 2]", r"x needs a JSON object, got '\[1, 2\]'"),
        ("int", None, "x needs a value"),
    ],
)
def test_coerce_names_what_a_bad_value_needed(kind, raw, message):
    with pytest.raises(ConfigError, match=message):
        spec(kind).coerce(raw)


def test_an_optional_setting_reads_empty_text_as_none():
    assert spec("int", optional=True).coerce("") is None
    assert spec("str", optional=True).coerce("None") is None
    assert spec("int", optional=True).coerce("3") == 3


def test_literal_and_registry_choices_reach_the_option_list():
    @dataclass(frozen=True)
    class Toy(Settings):
        side: Literal["left", "right"] = setting("left", "which side")

    parser = argparse.ArgumentParser(exit_on_error=False)
    add_settings_arguments(parser, [Toy, RREDCoTConfig], exclude=("path_aggregation",))
    actions = {a.dest: a for a in parser._actions}
    assert actions["setting::side"].choices == ["left", "right"]
    assert actions["setting::aggregation"].choices[-1] == "candidate_normalized"
    assert "setting::path_aggregation" not in actions
    assert actions["setting::side"].help == "which side [Toy] (default left)"


def test_a_name_two_types_share_offers_both_choices_and_says_whose_default_is_which():
    from rredcot_viz.diagnosis.self_localize import SelfLocalizeConfig
    from rredcot_viz.diagnosis.value_detectors import MinSigmaConfig

    parser = argparse.ArgumentParser(exit_on_error=False)
    add_settings_arguments(parser, {"min_sigma": MinSigmaConfig, "self_localize": SelfLocalizeConfig}, prefix="det")
    variant = next(a for a in parser._actions if "--det-variant" in a.option_strings)
    assert variant.choices == ["argmin", "first_below", "l2", "neutral", "l1"]
    assert variant.help.startswith("min_sigma: flag the lowest sigma, or the earliest one below -tau; self_localize: ")
    assert variant.help.endswith("(default argmin for min_sigma; neutral for self_localize)")
    args = parser.parse_args(["--det-variant", "l2"])
    assert settings_from_args(args, SelfLocalizeConfig, prefix="det") == {"variant": "l2"}
    with pytest.raises(ConfigError, match="variant must be one of argmin, first_below, got 'l2'"):
        MinSigmaConfig(**settings_from_args(args, MinSigmaConfig, prefix="det"))


@dataclass(frozen=True)
class Inner(Settings):
    k: int = setting(4, "how many", low=1)
    mode: str = setting("a", "which", choices=("a", "b"))


@dataclass(frozen=True)
class Outer(Settings):
    steps: int = setting(1, "steps", low=1)
    inner: Inner = nested(Inner, "the inner settings", only=("k",))


@dataclass(frozen=True)
class OuterAll(Outer):
    inner: Inner = nested(Inner, "the inner settings")


def test_a_nested_config_lists_its_settings_as_the_outer_ones_under_their_own_names():
    assert [(s.name, s.path) for s in specs(OuterAll)] == [("steps", ()), ("k", ("inner",)), ("mode", ("inner",))]
    assert [s.name for s in specs(Outer)] == ["steps", "k"]  # ``only``: the rest is not the outer config's
    assert setting_names(Outer) == ["steps", "inner", "k"]
    config = from_settings(OuterAll, {"k": 6, "mode": "b", "steps": 2})
    assert config == OuterAll(2, Inner(6, "b")) and setting_value(config, "mode") == "b"
    assert from_settings(OuterAll, {"inner": Inner(mode="b"), "k": 7}).inner == Inner(7, "b")  # whole, then by name
    assert with_overrides(config, "toy", {"k": 9}).inner == Inner(9, "b")
    with pytest.raises(ConfigError, match=r"k must be in \[1, \.\.\.\], got 0"):
        from_settings(OuterAll, {"k": 0})
    with pytest.raises(ConfigError, match="Outer does not use inner.mode .* leave it at its default 'a'"):
        Outer(inner=Inner(mode="b"))
    with pytest.raises(ConfigError, match="toy has no setting mode; its settings are: steps, inner, k"):
        with_overrides(Outer(), "toy", {"mode": "b"})


def test_a_stored_config_loads_with_its_nested_settings_in_their_object_or_flat():
    assert from_stored(OuterAll, {"steps": 3, "inner": {"k": 5, "mode": "b"}}) == OuterAll(3, Inner(5, "b"))
    assert from_stored(OuterAll, {"steps": 3, "k": 5, "mode": "b", "gone": 1}) == OuterAll(3, Inner(5, "b"))
    assert OuterAll(inner={"k": 2}).inner == Inner(2)  # a dict (stored JSON) is rebuilt


def nested_form_script() -> None:
    import streamlit as st

    from rredcot_viz.training import method_config_type, quick
    from rredcot_viz.ui.settings_form import settings_form

    initial = quick("rredcot", k=7)
    st.session_state["values"] = settings_form(
        method_config_type("rredcot"), "toy", initial=initial, exclude=("method",)
    )


def test_a_nested_config_is_one_widget_per_setting():
    """The Train page's form of RREDCoT-GRPO: the credit settings are widgets of their own, started from the
    preset's nested values, and the values build the config back."""
    from rredcot_viz.training import CreditConfig, quick

    app = AppTest.from_function(nested_form_script, default_timeout=60).run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.number_input(key="toy_k").value == 7 and app.selectbox(key="toy_coupling").value == "value_baseline"
    app.selectbox(key="toy_coupling").select("b").run()
    assert quick("rredcot", **app.session_state["values"]).credit == CreditConfig(k=7, coupling="b")
