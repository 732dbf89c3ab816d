"""Dataset runs' tables (workflows/dataset.py)."""

from __future__ import annotations

from rredcot_viz.workflows.dataset import DatasetRecord, records_frame


def test_labelled_first_error_reads_none_for_a_correct_trace_and_blank_without_a_label():
    records = [
        DatasetRecord("h1", "t1", "s", 1.0, first_error_label=-1),
        DatasetRecord("h2", "t2", "s", 0.0, first_error_label=2),
        DatasetRecord("h3", "t3", "s", 0.0),
    ]
    assert records_frame(records)["labelled first error"].tolist() == ["none", "3", ""]
