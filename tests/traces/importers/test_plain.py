"""The ``plain`` importer (importers/plain.py): natural field names, aliases and refusals by field name."""

from __future__ import annotations

import math

import pytest

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers import detect_format, importers

PLAIN = importers.get("plain")()


def test_plain_record_with_natural_names() -> None:
    record = {
        "question": "What is 3 + 3?",
        "trace": "3 + 3 = 6.\nThe answer is 6.",
        "reference_answer": "6",
        "reference_solution": "3 + 3 = 6",
        "model": "mine",
    }
    assert detect_format(record) == "plain"
    (trace,) = PLAIN.convert(record)
    assert (trace.question, trace.cot, trace.reference_answer, trace.reference_solution) == (
        "What is 3 + 3?",
        "3 + 3 = 6.\nThe answer is 6.",
        "6",
        "3 + 3 = 6",
    )
    assert trace.outcome == 1.0 and trace.source == "plain"
    assert trace.metadata == {"unused_fields": ["model"]}


@pytest.mark.parametrize(
    ("question", "response", "answer"),
    [("problem", "response", "gt_answer"), ("prompt", "completion", "ground_truth"), ("query", "output", "answer")],
)
def test_plain_aliases(question: str, response: str, answer: str) -> None:
    record = {question: "What is 2 + 2?", response: "2 + 2 = 5. The answer is 5.", answer: 4}
    assert detect_format(record) == "plain"
    (trace,) = PLAIN.convert(record)
    assert trace.reference_answer == "4" and trace.answer == "5" and trace.outcome == 0.0


def test_plain_gsm8k_style_answer_gives_solution_and_answer() -> None:
    record = {"question": "Q?", "response": "1 + 1 = 2. The answer is 2.", "answer": "1 + 1 = 2\n#### 2"}
    assert detect_format(record) == "plain"  # a response field: not a GSM8K problem record
    (trace,) = PLAIN.convert(record)
    assert (trace.reference_answer, trace.reference_solution) == ("2", "1 + 1 = 2")


def test_plain_steps_without_response_become_the_response() -> None:
    record = {"question": "Q?", "steps": ["1 + 1 = 2.", "The answer is 2."], "gt_answer": "2", "first_error": -1}
    (trace,) = PLAIN.convert(record)
    assert trace.cot == "1 + 1 = 2.\n\nThe answer is 2." and trace.steps == ("1 + 1 = 2.", "The answer is 2.")
    assert trace.first_error == -1


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"trace": "  "}, "the response field `trace` is empty"),
        ({"trace": 5}, "must be text, got int"),
        ({"question": ""}, "the question field `question` is empty"),
        ({"steps": ["not in it"]}, "not substrings of the response"),
        ({"correct": "yes"}, "must be true or false"),
        ({"answer": math.nan}, "`answer` is NaN"),
        ({"answer": [1, 2]}, "`answer` is a list"),
        ({"first_error": "2"}, "0-based step index or -1"),
    ],
)
def test_plain_refuses_bad_fields_by_name(change: dict, expected: str) -> None:
    record = {"question": "Q?", "trace": "1 + 1 = 2.", "answer": "2", **change}
    with pytest.raises(TraceError, match=expected):
        PLAIN.convert(record)
