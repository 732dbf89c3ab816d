"""A table the user can also take away: one widget for every page's per-segment or per-run table."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rredcot_viz.engine import Analyzer
from rredcot_viz.files import spreadsheet_cell
from rredcot_viz.segmenters import Segmenter
from rredcot_viz.workflows.analyze import provenance


def table_with_download(
    frame: pd.DataFrame, label: str, file_name: str, key: str, download: pd.DataFrame | None = None
) -> None:
    """Show ``frame`` and offer ``download`` (default: the same table) as a CSV named ``file_name``."""
    st.dataframe(frame, hide_index=True, key=key)
    csv = csv_bytes(frame if download is None else download)
    st.download_button(label, csv, file_name=file_name, mime="text/csv", key=f"{key}_csv")


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as a CSV to download, its text cells safe to open in a spreadsheet (``spreadsheet_cell``)."""
    return frame.map(spreadsheet_cell).to_csv(index=False).encode()


def with_provenance(
    rows: list[dict[str, Any]], analyzer: Analyzer, segmenter: Segmenter, settings: dict[str, Any]
) -> pd.DataFrame:
    """Rows (with their whole text) and, on each, the model fingerprint and settings they were computed with."""
    about = provenance(analyzer, segmenter, settings)
    return pd.DataFrame([{**row, **about} for row in rows])
