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
