"""Field aliases, ``--map`` renames and reference checks (importers/fields.py)."""

from __future__ import annotations

import math

import pytest

from rredcot_viz.errors import ImportFormatError, TraceError
from rredcot_viz.traces.importers import detect_format
from rredcot_viz.traces.importers.fields import (
    apply_field_map,
    find_field,
    mapping_hint,
    parse_field_map,
    reference_text,
    split_gsm8k_answer,
)


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


def test_unknown_record_message_lists_fields_and_a_mapping() -> None:
    record = {"q": "Q?", "model_text": "1 + 1 = 2"}
    hint = mapping_hint(record)
    assert "['model_text', 'q']" in hint and "--map model_text=cot --map q=question" in hint
    with pytest.raises(ImportFormatError, match=r"mine.jsonl: cannot tell the format .*--map"):
        detect_format(record, "mine.jsonl")
    assert detect_format(apply_field_map(record, {"q": "question", "model_text": "cot"})) == "native"
