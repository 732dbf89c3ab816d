"""Streamlit widgets generated from a config's settings (``rredcot_viz.settings``): one widget per field, with
its help, choices and range, so a setting added to a config appears in the app with no page edit.

    values = settings_form(RREDCoTGRPOConfig, "train", initial=quick("rredcot"))
    config = config_for("rredcot", **values)

A widget starts at ``initial``'s value (or the default) and follows it while the user has not touched it, so a
default that depends on the page (the trace, the chosen method) never overrides a value the user chose.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from rredcot_viz.settings import SettingSpec, setting_value, specs

COLUMNS = 4
Widget = Callable[[SettingSpec, str], Any]  # a custom widget for one setting: (its spec, its key) -> value


def settings_form(
    config_type: type,
    key: str,
    *,
    initial: Any = None,
    exclude: tuple[str, ...] = (),
    columns: int = COLUMNS,
    custom: Mapping[str, Widget] | None = None,
    more: str = "More settings",
) -> dict[str, Any]:
    """Widgets for every setting of ``config_type`` (advanced ones in an expander titled ``more``), keyed
    ``{key}_{name}``, starting from ``initial``'s values (or the defaults); ``custom`` renders chosen settings
    with a widget of the page's (e.g. K bounded by the trace). Returns the values by field name, coerced to each
    field's type."""
    chosen = [spec for spec in specs(config_type) if spec.name not in exclude]
    values: dict[str, Any] = {}
    for advanced in (False, True):
        group = [spec for spec in chosen if spec.advanced == advanced]
        if not group:
            continue
        with st.expander(more) if advanced else st.container():
            cells = st.columns(columns)
            for index, spec in enumerate(group):
                start = spec.default if initial is None else setting_value(initial, spec.name, spec.default)
                with cells[index % columns]:
                    widget_key = f"{key}_{spec.name}"
                    if custom and spec.name in custom:
                        raw = custom[spec.name](spec, widget_key)
                    else:
                        raw = setting_widget(spec, start, widget_key)
                    values[spec.name] = spec.coerce(raw)
    return values


def setting_widget(spec: SettingSpec, value: Any, key: str) -> Any:
    """One widget for one setting, starting at ``value``; returns what the user chose (text for free-form kinds)."""
    label = spec.name.replace("_", " ").capitalize()
    if spec.kind == "bool":
        follow_default(key, bool(value))
        return st.checkbox(label, help=spec.help, key=key)
    if spec.choices is not None:
        options = list(spec.choices)
        follow_default(key, value if value in options else options[0])
        return st.selectbox(label, options, help=spec.help, key=key)
    if spec.kind in ("int", "float") and not spec.optional:
        cast = int if spec.kind == "int" else float
        follow_default(key, cast(value))
        low, high = (None if bound is None else cast(bound) for bound in (spec.low, spec.high))
        if spec.kind == "int":
            return st.number_input(label, low, high, step=1, help=spec.help, key=key)
        return st.number_input(label, low, high, step=_step(float(value)), format="%g", help=spec.help, key=key)
    follow_default(key, _as_text(spec, value))
    return st.text_input(label, help=spec.help + (" (empty = none)" if spec.optional else ""), key=key)


def preset(config_type: type, key: str, values: dict[str, Any]) -> None:
    """Set the widgets of ``settings_form(config_type, key)`` to ``values`` before the page draws them (e.g. to
    open a trace with the settings a stored run used); settings the config does not have are ignored."""
    for spec in specs(config_type):
        if spec.name in values:
            value = values[spec.name]
            if spec.kind not in ("bool", "int", "float") or spec.optional:
                value = value if spec.choices is not None else _as_text(spec, value)
            st.session_state[f"{key}_{spec.name}"] = value


def follow_default(key: str, default: Any) -> None:
    """Let an untouched widget follow a default that depends on the page; a value the user chose stays (unless
    the widget under ``key`` changed kind, e.g. K from a slider to a text box)."""
    marker = f"{key}__default"
    current = st.session_state.get(key)
    untouched = key not in st.session_state or current == st.session_state.get(marker)
    if untouched or type(current) is not type(default):
        st.session_state[key] = default
    st.session_state[marker] = default


def _as_text(spec: SettingSpec, value: Any) -> str:
    if value is None:
        return ""
    if spec.kind == "tuple":
        return ",".join(map(str, value))
    if spec.kind == "dict":
        return json.dumps(value)
    return str(value).encode("unicode_escape").decode() if spec.kind == "str" else str(value)


def _step(value: float) -> float:
    """A step a tenth of the value's order of magnitude (5e-5 steps by 1e-5), 0.1 for 0."""
    if value == 0:
        return 0.1
    magnitude = 10 ** int(f"{abs(value):e}".split("e")[1])
    return magnitude / 10 if abs(value) >= 1 else magnitude
