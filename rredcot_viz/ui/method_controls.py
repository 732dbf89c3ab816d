"""Settings controls: a method picked from its registry with its settings generated from its config
(``settings_form``), so no page retypes a choice, a default or a help text.

    segmenter = segmenter_picker("inspect", trace, text_input=tokens)  # K bounded by the segmenter's reach
    estimator, analysis_config = estimator_picker("inspect")
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import streamlit as st

from rredcot_viz.engine import AnalysisConfig
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import ValueEstimator, estimators, live_estimators, richer_estimators
from rredcot_viz.registry import Registry
from rredcot_viz.segmenters import DEFAULT_SEGMENTER, Segmenter, SegmenterInput, segmenters
from rredcot_viz.settings import SettingSpec, specs
from rredcot_viz.traces.needs import describe, missing
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui.settings_form import Widget, follow_default, setting_widget, settings_form

# The app scores only the chosen segmenter's candidate cuts up front: a first look in seconds (docs/guide.md, Speed).
APP_ANALYSIS = AnalysisConfig(boundaries="segmenter")
COMMON_DELIMITERS = ("</thought>", " ки", "\n\n", "\n", ". ")  # tried in order for the delimiter default
K_REACH = 32  # the K slider's top when the trace's pieces are not known


def summary(registry: Registry, name: str) -> str:
    """The first sentence of a method's docstring (its class's, else its module's): the help of a choice."""
    method = registry.get(name)
    doc = method.__doc__ or sys.modules[method.__module__].__doc__ or ""
    text = " ".join(doc.split("\n\n")[0].split()).replace("``", "")
    return re.split(r"(?<=\.)\s", text, maxsplit=1)[0]


def method_picker(
    label: str,
    registry: Registry,
    names: list[str],
    key: str,
    default: str | None = None,
    needs: bool = False,
    lacking: Mapping[str, list[str]] | None = None,
) -> str:
    """A selectbox of registered methods, each one's docstring summary (and with ``needs``, what it needs of a
    trace) in the help. An untouched choice follows ``default`` (it may depend on the traces shown); a method
    in ``lacking`` is still offered, labelled with what the trace lacks for it."""

    def line(name: str) -> str:
        wanted = f" Needs {describe(registry.get(name).needs) or 'nothing but the text'}." if needs else ""
        return f"**{name}**: {summary(registry, name)}{wanted}"

    def option(name: str) -> str:
        missing_here = (lacking or {}).get(name)
        return f"{name} · needs {', '.join(n.replace('_', ' ') for n in missing_here)}" if missing_here else name

    if key in st.session_state and st.session_state[key] not in names:
        del st.session_state[key]  # a choice this page no longer offers (e.g. "given" on a trace without steps)
    if default in names:
        follow_default(key, default)
    # with a key, the widget's state is its value; an index besides a value set by code only draws a warning
    return st.selectbox(label, names, key=key, format_func=option, help="\n\n".join(map(line, names)))


def build(method_type: type, values: dict[str, Any]) -> Any:
    """A method from the chosen settings; settings that do not fit together stop the page with the reason."""
    try:
        return method_type(**values)
    except RredcotError as error:
        st.error(str(error))
        st.stop()


def segmenter_picker(
    prefix: str, trace: Trace, default: str = DEFAULT_SEGMENTER, text_input: SegmenterInput | None = None
) -> Segmenter:
    """A segmenter and its settings (keys ``{prefix}_segmenter``, ``{prefix}_<setting>``). K is a slider from the
    config's default, bounded by the most pieces the chosen segmenter can cut the trace into (``k_reach``) when
    ``text_input`` (its tokens, no model call) is given; the delimiter starts at one the trace contains."""
    names = [name for name in segmenters.names() if not missing(trace, segmenters.get(name).needs)]
    name = method_picker("Segmenter", segmenters, names, f"{prefix}_segmenter", default)
    segmenter_type = segmenters.get(name)
    initial = segmenter_type.Config()
    if hasattr(initial, "delimiter"):
        found = [d for d in (initial.delimiter, *COMMON_DELIMITERS) if d in trace.cot]
        initial = replace(initial, delimiter=found[0] if found else initial.delimiter)
    reach = segmenter_type.k_reach(text_input) if text_input is not None else None
    custom = {"k": _k_slider(reach)} if getattr(initial, "k", None) is not None else None
    values = settings_form(
        segmenter_type.Config, prefix, initial=initial, custom=custom, more="More segmenter settings"
    )
    return build(segmenter_type, values)


def _k_slider(pieces: int | None) -> Widget:
    """K as a slider from the config's default, never above ``pieces`` (the chosen segmenter's reach on the trace,
    when known)."""

    def slider(spec: SettingSpec, key: str) -> int:
        if pieces is not None and pieces <= 2:
            st.caption(f"This segmenter cuts this trace into at most {pieces} piece(s): K = {pieces}.")
            return pieces
        top = pieces if pieces is not None else K_REACH
        follow_default(key, min(spec.default, top))
        st.session_state[key] = min(max(st.session_state[key], 2), top)
        label = f"K (target segments, at most {pieces} pieces here)" if pieces else "K (target segments)"
        return st.slider(label, 2, max(top, 3), key=key, help=spec.help)

    return slider


def estimator_picker(
    prefix: str, names: list[str] | None = None, default: str | None = None, trace: Trace | None = None
) -> tuple[ValueEstimator, AnalysisConfig]:
    """An estimator (of ``names``; by default those that declare ``live``: the page runs it while the user waits),
    its settings and the redistribution variant (keys ``{prefix}_estimator``, ``{prefix}_<setting>``,
    ``{prefix}_variant``); returns the estimator and the analysis config. With ``trace``, the choices it cannot
    feed say what they need."""
    names = live_estimators() if names is None else names
    lacking = richer_estimators(trace, names) if trace is not None else None
    left, right = st.columns(2)
    with left:
        name = method_picker("Estimator", estimators, names, f"{prefix}_estimator", default, True, lacking)
    with right:
        analysis_config = variant_control(prefix)
    estimator_type = estimators.get(name)
    values = settings_form(estimator_type.Config, prefix, more=f"More {name} settings")
    return build(estimator_type, values), analysis_config


def variant_control(prefix: str) -> AnalysisConfig:
    """The redistribution variant (``AnalysisConfig.variant``), on the app's analysis config."""
    (spec,) = [spec for spec in specs(AnalysisConfig) if spec.name == "variant"]
    return replace(APP_ANALYSIS, variant=spec.coerce(setting_widget(spec, APP_ANALYSIS.variant, f"{prefix}_variant")))


def method_settings(config_types: Mapping[str, type], prefix: str) -> dict[str, dict[str, Any]]:
    """Each named method's settings in one expander (keys ``{prefix}_{method}_<setting>``), for calls that run
    several methods at once (``workflows.compare``)."""
    values: dict[str, dict[str, Any]] = {name: {} for name in config_types}
    described = {name: config_type for name, config_type in config_types.items() if specs(config_type)}
    if described:
        with st.expander("Settings of the chosen methods"):
            for name, config_type in described.items():
                st.markdown(f"**{name}**")
                values[name] = settings_form(config_type, f"{prefix}_{name}", more=f"More {name} settings")
    return values


def richer_choices(trace: Trace) -> str:
    """One line offering the live estimators ``trace`` cannot feed, with what each would need."""
    wanted = "; ".join(f"{name} needs {describe(needs)}" for name, needs in richer_estimators(trace).items())
    return (
        f"Other choices need more: {wanted}. Give the trace a reference answer or a correct/wrong label (Paste or "
        "Upload) to use them."
    )
