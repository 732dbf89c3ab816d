"""Plain records with common field names: ``{question, response, answer}``, ``{problem, trace, gt_answer,
solution}``, ``{prompt, completion}``, ``{question, steps, ground_truth}`` and the like (``fields.FIELD_ALIASES``).

This is the fallback format: it is chosen only when no dataset-specific importer claims the record. Mapping:
the first alias present gives each field; ``steps`` (a list of strings) becomes the pre-split steps and, with
no response field, the response (steps joined by a blank line, as for ProcessBench). A reference answer in
GSM8K's ``... #### 42`` form is split into the reference solution and the answer. Fields it does not use are
kept in ``metadata["unused_fields"]`` by name, so nothing is dropped without a trace.
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.importers.fields import (
    FIELD_ALIASES,
    find_field,
    flag_value,
    reference_text,
    split_gsm8k_answer,
)
from rredcot_viz.traces.trace import Trace

STEP_SEPARATOR = "\n\n"


@importers.register("plain")
class PlainImporter(Importer):
    name = "plain"
    description = "plain records with common field names (question/problem/prompt + trace/response/output/steps)"
    fallback = True
    label_field = "first_error"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        return find_field(record, "question") is not None and (
            find_field(record, "cot") is not None or isinstance(record.get("steps"), list)
        )

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        used = {name: find_field(record, name) for name in FIELD_ALIASES}
        question = _text(record, used["question"], "question")
        steps = _steps(record.get("steps"))
        cot = _text(record, used["cot"], "response") if used["cot"] else STEP_SEPARATOR.join(steps or ())
        if steps is not None and used["cot"] and not _in_order(steps, cot):
            raise TraceError("`steps` are not substrings of the response in order; drop one of the two fields")
        reference_solution = _optional_text(record, used["reference_solution"])
        reference_answer = None
        if used["reference_answer"]:
            raw = record[used["reference_answer"]]
            if isinstance(raw, str):
                rationale, raw = split_gsm8k_answer(raw)
                reference_solution = reference_solution or rationale
            reference_answer = reference_text(raw, used["reference_answer"])
        final_answer = reference_text(record.get(used["final_answer"]), used["final_answer"] or "final_answer")
        correct = flag_value(record.get(used["correct"])) if used["correct"] else None
        if correct is not None and not isinstance(correct, bool):
            raise TraceError(f"`{used['correct']}` must be true or false, got {correct!r}")
        first_error = record.get("first_error")
        if first_error is not None and (not isinstance(first_error, int) or isinstance(first_error, bool)):
            raise TraceError(f"`first_error` must be a 0-based step index or -1, got {first_error!r}")
        trace_id = record.get(used["trace_id"]) if used["trace_id"] else None
        taken = {name for name in used.values() if name} | {"steps"}
        unused = sorted(set(record) - taken)
        return [
            Trace(
                question=question,
                cot=cot,
                final_answer=final_answer,
                reference_answer=reference_answer,
                reference_solution=reference_solution,
                steps=steps,
                first_error=first_error,
                correct=correct,
                source=self.name,
                trace_id=None if trace_id is None else str(trace_id),
                metadata={"unused_fields": unused} if unused else {},
            )
        ]


def _text(record: dict[str, Any], name: str | None, what: str) -> str:
    value = record.get(name) if name else None
    if not isinstance(value, str):
        raise TraceError(f"the {what} field `{name}` must be text, got {type(value).__name__}")
    if not value.strip():
        raise TraceError(f"the {what} field `{name}` is empty")
    return value


def _optional_text(record: dict[str, Any], name: str | None) -> str | None:
    if name is None:
        return None
    value = record[name]
    if not isinstance(value, str):
        raise TraceError(f"`{name}` must be text, got {type(value).__name__}")
    return value.strip() or None


def _steps(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(s, str) and s.strip() for s in value):
        raise TraceError("`steps` must be a non-empty list of non-empty strings")
    return tuple(value)


def _in_order(steps: tuple[str, ...], text: str) -> bool:
    position = 0
    for step in steps:
        found = text.find(step, position)
        if found < 0:
            return False
        position = found + len(step)
    return True
