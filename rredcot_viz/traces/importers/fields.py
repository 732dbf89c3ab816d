"""Field names: the aliases that common files use for our trace fields, the user's ``--map`` renames, and the
checks that a reference value is one answer written as text.

A file of ``{question, response, answer}`` records from someone's own eval harness should import without a
schema to learn. The alias table says, per field of ours, which names mean it (first match wins); a field map
(``--map THEIRS=OURS``, or the mapping box beside the upload) renames a file's own fields before anything else
looks at the record.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rredcot_viz.errors import ImportFormatError, TraceError

FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("question", "problem", "prompt", "query", "input", "instruction"),
    "cot": (
        "cot",
        "trace",
        "response",
        "output",
        "completion",
        "generation",
        "model_output",
        "model_solution",
        "model_response",
        "reasoning",
        "chain_of_thought",
    ),
    "steps": ("steps",),
    "reference_answer": (
        "reference_answer",
        "gt_answer",
        "ground_truth",
        "ground_truth_answer",
        "gold_answer",
        "expected_answer",
        "target",
        "answer",
    ),
    "reference_solution": (
        "reference_solution",
        "solution",
        "gold_solution",
        "ground_truth_solution",
        "gt_solution",
        "reference_rationale",
    ),
    "final_answer": ("final_answer", "predicted_answer", "model_answer"),
    "correct": ("correct", "is_correct", "final_answer_correct"),
    "first_error": ("first_error",),
    "trace_id": ("trace_id", "id", "uid"),
}
"""Our field -> the names that files use for it, in order of preference."""

MAPPABLE_FIELDS = tuple(FIELD_ALIASES)
REFERENCE_MARKS = ("ground_truth", "gold", "reference", "gt_", "expected", "target", "correct_solution")
"""Parts of a field name that say it holds the reference (the gold answer or solution), never the model's
response: such a field is never suggested as ``cot`` or ``question``."""
_GSM8K_FINAL_LINE = re.compile(r"\n?####\s*(?P<answer>[^\n]+?)\s*$")


def parse_field_map(pairs: list[str] | tuple[str, ...] | str | None) -> dict[str, str]:
    """``["response_text=cot", ...]`` (or one comma-separated string) -> ``{"response_text": "cot"}``."""
    if not pairs:
        return {}
    if isinstance(pairs, str):
        pairs = [p for p in re.split(r"[,\n]", pairs) if p.strip()]
    mapping: dict[str, str] = {}
    for pair in pairs:
        theirs, sep, ours = (part.strip() for part in pair.partition("="))
        if not sep or not theirs or not ours:
            raise ImportFormatError(f"field mapping {pair!r} is not THEIRS=OURS (e.g. response_text=cot)")
        if ours not in MAPPABLE_FIELDS:
            raise ImportFormatError(
                f"field mapping {pair!r} maps to {ours!r}, which is not one of our fields: {', '.join(MAPPABLE_FIELDS)}"
            )
        if mapping.get(theirs, ours) != ours:
            raise ImportFormatError(
                f"field mapping names {theirs!r} twice ({theirs}={mapping[theirs]} and {theirs}={ours}); give each "
                "field of the file one of ours"
            )
        other = next((name for name, mapped in mapping.items() if mapped == ours and name != theirs), None)
        if other is not None:
            raise ImportFormatError(
                f"field mapping maps both {other!r} and {theirs!r} to {ours!r}; a field of ours takes one of the file's"
            )
        mapping[theirs] = ours
    return mapping


def apply_field_map(record: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """The record with the user's fields renamed to ours (a renamed field replaces one of ours of that name)."""
    if not mapping:
        return record
    renamed = {key: value for key, value in record.items() if key not in mapping}
    for theirs, ours in mapping.items():
        if theirs in record:
            renamed[ours] = record[theirs]
    return renamed


def find_field(record: dict[str, Any], ours: str) -> str | None:
    """The record's name for our field ``ours`` (the first alias present with a value), or None."""
    return next((name for name in FIELD_ALIASES[ours] if record.get(name) is not None), None)


def mapping_hint(record: dict[str, Any]) -> str:
    """One sentence for a record nothing recognises: the fields it has and a mapping that would work."""
    fields = sorted(record)
    has_question = find_field(record, "question") is not None
    unused = [
        name
        for name in fields
        if not any(name in names for names in FIELD_ALIASES.values())
        and not any(mark in name.lower() for mark in REFERENCE_MARKS)
    ]
    strings = sorted((name for name in unused if isinstance(record[name], str)), key=lambda n: -len(record[n]))
    suggestion = []  # the longest unrecognised text is most likely the response, the next one the question
    if find_field(record, "cot") is None and find_field(record, "steps") is None and strings:
        suggestion.append(f"{strings.pop(0)}=cot")
    if not has_question and strings:
        suggestion.append(f"{strings[0]}=question")
    example = " ".join(f"--map {pair}" for pair in suggestion) or "--map THEIRS=OURS"
    return (
        f"the record has fields {fields[:16]}; a trace needs a question (one of "
        f"{', '.join(FIELD_ALIASES['question'])}) and a response (one of {', '.join(FIELD_ALIASES['cot'])}, or a "
        f"`steps` list). Map your names to ours with a field mapping, e.g. `{example}` on the command line or "
        "the same pairs in the upload's field-mapping box"
    )


def reference_text(value: Any, name: str) -> str | None:
    """A reference (or final) answer as text: numbers become their usual writing, missing or empty becomes None,
    and NaN, infinities, booleans, lists and objects are refused with what they were."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TraceError(f"`{name}` is a boolean ({value}), not an answer; give the answer as text or leave it out")
    if isinstance(value, float):
        if math.isnan(value):
            raise TraceError(f"`{name}` is NaN; leave the field out (or null) where there is no reference")
        if math.isinf(value):
            raise TraceError(f"`{name}` is infinite ({value}); give the answer as text")
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.lower() == "nan":
            raise TraceError(f"`{name}` is the text {value!r}, which marks a missing value; leave the field out")
        return stripped or None
    kind = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
    raise TraceError(f"`{name}` is {kind} ({str(value)[:60]}), not one answer; give a single answer as text")


def flag_value(value: Any) -> Any:
    """A table cell's ``true``/``false``/``1``/``0`` text as a bool (CSV cells carry no types); other values as
    they are."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    return value


def split_gsm8k_answer(text: str) -> tuple[str | None, str]:
    """(rationale, answer) of a GSM8K-style ``... #### 42`` text; (None, text) when it has no such line."""
    match = _GSM8K_FINAL_LINE.search(text)
    if match is None:
        return None, text
    return text[: match.start()].strip() or None, match.group("answer")
