"""Choices that outlive a visit to another page. Streamlit forgets the state of every widget a page does not
draw, so a page's choice would reset after a look at another page: ``kept`` hands the widget the value it had
when the user left (as its default, never written into its state), and ``keep`` remembers the value now."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st


def kept(key: str, default: Any, fit: Callable[[Any], Any] | None = None) -> Any:
    """The value remembered for widget ``key`` (adapted by ``fit`` to today's options), else ``default``."""
    remembered = st.session_state.get(f"kept_{key}")
    if remembered is None:
        return default
    return fit(remembered) if fit is not None else remembered


def keep(key: str, value: Any) -> Any:
    """Remember widget ``key``'s value for the next visit; returns it."""
    st.session_state[f"kept_{key}"] = value
    return value


def kept_index(key: str, options: list[Any], default: int = 0) -> int:
    """The ``index`` for sidebar widget ``key``: the option it showed on the last page that drew it (kept), so a
    visit to another page does not reset it. 0 when its state is already set (a link sets it before the widget
    is drawn, and Streamlit refuses a default beside a value set through the state)."""
    if key in st.session_state:
        return 0
    remembered = st.session_state.get(f"kept_{key}")
    return options.index(remembered) if remembered in options else default
