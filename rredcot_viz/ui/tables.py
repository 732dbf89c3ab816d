"""A table the user can also take away: one widget for every page's per-segment or per-run table."""

from __future__ import annotations

import pandas as pd
import streamlit as st


def table_with_download(frame: pd.DataFrame, label: str, file_name: str, key: str) -> None:
    """Show ``frame`` and offer it as a CSV named ``file_name`` (``label`` is the button's text)."""
    st.dataframe(frame, hide_index=True, key=key)
    csv = frame.to_csv(index=False).encode()
    st.download_button(label, csv, file_name=file_name, mime="text/csv", key=f"{key}_csv")
