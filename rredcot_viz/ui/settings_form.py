"""Streamlit widgets generated from a config's settings (``rredcot_viz.settings``): one widget per field, with
its help, choices and range, so a setting added to a config appears in the app with no page edit.

    values = settings_form(RREDCoTGRPOConfig, "train", initial=quick("rredcot"))
    config = config_for("rredcot", **values)
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from rredcot_viz.settings import SettingSpec, specs

COLUMNS = 4


def settings_form(
    config_type: type,
    key: str,
    *,
    initial: Any = None,
    exclude: tuple[str, ...] = (),
    columns: int = COLUMNS,
) -> dict[str, Any]:
    """Widgets for every setting of ``config_type`` (advanced ones in an expander), starting from ``initial``'s
    values (or the defaults); returns the chosen values by field name, coerced to each field's type."""
    chosen = [spec for spec in specs(config_type) if spec.name not in exclude]
    values: dict[str, Any] = {}
    for advanced in (False, True):
        group = [spec for spec in chosen if spec.advanced == advanced]
        if not group:
            continue
        container = st.expander("More settings") if advanced else st.container()
        with container:
            cells = st.columns(columns)
            for index, spec in enumerate(group):
                start = getattr(initial, spec.name) if initial is not None else spec.default
                with cells[index % columns]:
                    values[spec.name] = spec.coerce(setting_widget(spec, start, f"{key}_{spec.name}"))
    return values


def setting_widget(spec: SettingSpec, value: Any, key: str) -> Any:
    """One widget for one setting, showing ``value``; returns what the user chose (text for free-form kinds)."""
    label = spec.name.replace("_", " ").capitalize()
    if spec.kind == "bool":
        return st.checkbox(label, value=bool(value), help=spec.help, key=key)
    if spec.choices is not None:
        options = list(spec.choices)
        return st.selectbox(label, options, index=options.index(value) if value in options else 0, help=spec.help,
                            key=key)  # fmt: skip
    if spec.kind in ("int", "float") and not spec.optional:
        number: dict[str, Any] = {"min_value": spec.low, "max_value": spec.high, "help": spec.help, "key": key}
        if spec.kind == "int":
            return st.number_input(label, value=int(value), step=1, **number)
        return st.number_input(label, value=float(value), format="%g", step=_step(float(value)), **number)
    text = _as_text(spec, value)
    return st.text_input(label, value=text, help=spec.help + (" (empty = none)" if spec.optional else ""), key=key)


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
