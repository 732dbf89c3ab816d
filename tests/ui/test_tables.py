"""The app's CSV downloads (ui/tables.py): text a spreadsheet would run starts with a quote, numbers stay."""

from __future__ import annotations

import csv
import io

import pandas as pd

from rredcot_viz.ui.tables import csv_bytes


def test_a_downloaded_csv_cannot_run_in_a_spreadsheet():
    frame = pd.DataFrame({"text": ["=1+1", "@cmd", "-3", "plain"], "sigma": [-0.5, 0.25, -3.0, 1.0]})
    rows = list(csv.reader(io.StringIO(csv_bytes(frame).decode())))
    assert rows == [["text", "sigma"], ["'=1+1", "-0.5"], ["'@cmd", "0.25"], ["-3", "-3.0"], ["plain", "1.0"]]
    assert frame["text"].tolist() == ["=1+1", "@cmd", "-3", "plain"]  # the table on screen is unchanged
