"""Field aliases, ``--map`` renames, reference checks and the ``plain`` importer (importers/fields.py, plain.py)."""

from __future__ import annotations

import math

import pytest

from rredcot_viz.errors import ImportFormatError, TraceError
from rredcot_viz.traces.importers import detect_format, importers
from rredcot_viz.traces.importers.fields import (
    apply_field_map,
    find_field,
    mapping_hint,
    parse_field_map,
    reference_text,
    split_gsm8k_answer,
)

PLAIN = importers.get("plain")()


def test_parse_field_map_accepts_lists_and_comma_text() -> None:
    assert parse_field_map(["q=question", " model_response = cot "]) == {"q": "question", "model_response": "cot"}
    assert parse_field_map("q=question, out=cot\n") == {"q": "question", "out": "cot"}
    assert parse_field_map(None) == {} and parse_field_map("") == {}


@pytest.mark.parametrize(
    ("pair", "expected"),
    [("q", "is not THEIRS=OURS"), ("=cot", "is not THEIRS=OURS"), ("q=questions", "not one of our fields")],
)
def test_parse_field_map_refuses_malformed_pairs(pair: str, expected: str) -> None:
    with pytest.raises(ImportFormatError, match=expected):
        parse_field_map([pair])


def test_apply_field_map_renames_and_a_renamed_field_wins() -> None:
    record = {"q": "Q?", "cot": "old", "text": "new", "other": 1}
    assert apply_field_map(record, {"q": "question", "text": "cot"}) == {"question": "Q?", "cot": "new", "other": 1}
    assert apply_field_map(record, {}) is record


def test_find_field_takes_the_first_alias_with_a_value() -> None:
    assert find_field({"problem": "P", "question": "Q"}, "question") == "question"
    assert find_field({"question": None, "problem": "P"}, "question") == "problem"
    assert find_field({"x": 1}, "cot") is None


@pytest.mark.parametrize(
    ("value", "expected"), [(6, "6"), (6.0, "6"), (2.5, "2.5"), (" 42 ", "42"), ("", None), (None, None)]
)
def test_reference_text_writes_numbers_and_empties(value, expected) -> None:
    assert reference_text(value, "answer") == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (math.nan, "is NaN"),
        (math.inf, "is infinite"),
        ("NaN", "marks a missing value"),
        (True, "is a boolean"),
        ([1, 2], "is a list"),
        ({"a": 1}, "is a dict"),
    ],
)
def test_reference_text_refuses_what_is_not_one_answer(value, expected: str) -> None:
    with pytest.raises(TraceError, match=expected):
        reference_text(value, "gt_answer")


def test_split_gsm8k_answer() -> None:
    assert split_gsm8k_answer("3 + 3 = 6\n#### 6") == ("3 + 3 = 6", "6")
    assert split_gsm8k_answer("6") == (None, "6")


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


def test_unknown_record_message_lists_fields_and_a_mapping() -> None:
    record = {"q": "Q?", "model_text": "1 + 1 = 2"}
    hint = mapping_hint(record)
    assert "['model_text', 'q']" in hint and "--map model_text=cot --map q=question" in hint
    with pytest.raises(ImportFormatError, match=r"mine.jsonl: cannot tell the format .*--map"):
        detect_format(record, "mine.jsonl")
    assert detect_format(apply_field_map(record, {"q": "question", "model_text": "cot"})) == "native"


def test_processbench_reads_reference_fields() -> None:
    record = {"problem": "Q?", "steps": ["1 + 1 = 2.", "So 2."], "label": -1, "reference_answer": 2, "solution": "x"}
    (trace,) = importers.get("processbench")().convert(record)
    assert (trace.reference_answer, trace.reference_solution) == ("2", "x")
    record["reference_answer"] = math.nan
    with pytest.raises(TraceError, match="is NaN"):
        importers.get("processbench")().convert(record)
