"""Dataset runs' tables (workflows/dataset.py)."""

from __future__ import annotations

import pytest

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.dataset import DatasetRecord, analyze_dataset, records_frame


def test_labelled_first_error_reads_none_for_a_correct_trace_and_blank_without_a_label():
    records = [
        DatasetRecord("h1", "t1", "s", 1.0, first_error_label=-1),
        DatasetRecord("h2", "t2", "s", 0.0, first_error_label=2),
        DatasetRecord("h3", "t3", "s", 0.0),
    ]
    assert records_frame(records)["labelled first error"].tolist() == ["none", "3", ""]


def test_an_analysis_whose_every_trace_failed_fails(tiny):
    """A job of nothing but error rows is reported as failed, with what went wrong, not as done."""
    traces = [
        Trace("What is 2 + 2?", "2 + 2 = 4.\nThe answer is 4.", correct=True),
        Trace("What is 3 + 2?", "3 + 2 = 5.\nThe answer is 5."),  # no label, no reference
    ]
    line, rredcot = segmenters.get("line")(), estimators.get("rredcot")()
    with pytest.raises(RredcotError, match=r"^all 2 traces failed; the first: estimator 'rredcot' needs a reference"):
        analyze_dataset(Analyzer(tiny), traces, line, rredcot)
    records = analyze_dataset(Analyzer(tiny), traces, line, estimators.get("own_answer")())
    assert [r.error is None for r in records] == [True, True] and sum(records[0].sigma) == pytest.approx(1.0)
