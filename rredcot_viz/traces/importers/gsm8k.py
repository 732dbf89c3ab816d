r"""GSM8K (openai/grade-school-math) problem files such as ``test.jsonl``: ``{question, answer}`` where ``answer``
is a rationale with ``<<expr=value>>`` calculator annotations whose last line is ``#### <final answer>``.

A problem set holds no model traces, so each record becomes the *reference solution as a trace* (source
``gsm8k``, ``correct=True``, metadata ``{"kind": "reference_solution"}``), which is how problems and their
references (U*, Y*) enter the app. Mapping (docs/method.md §3.2): Y* = the text after ``#### `` (``reference_answer``
and ``final_answer``); U* = the rationale before ``\n#### `` with the annotations removed (``reference_solution``;
an estimator appends its own answer trigger and Y*); ``cot`` = U* followed by the ``#### Y*`` line; ``steps``
are the non-empty rationale lines (docs/guide.md's natural reference steps). No first-error label: ``first_error``
stays None, as the correctness of a reference is an assumption, not an annotation.
"""

from __future__ import annotations

import re
from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.importers.fields import find_field
from rredcot_viz.traces.trace import Trace

_ANNOTATION = re.compile(r"<<[^<>]*>>")
_FINAL_LINE = re.compile(r"(?:^|\n)####[ \t]*(?P<answer>[^\n]*?)\s*$")


def strip_calculator_annotations(text: str) -> str:
    """``48/2 = <<48/2=24>>24`` -> ``48/2 = 24``: the annotations are a tool-use artefact, not reasoning text."""
    return _ANNOTATION.sub("", text)


def split_final_line(text: str, pattern: re.Pattern[str], what: str, marker: str) -> tuple[str, str]:
    """(rationale before the final-answer line, answer) of a GSM8K-style text; raises when the line is absent."""
    match = pattern.search(text)
    if match is None or not match.group("answer"):
        raise TraceError(f"the {what} does not end with a final-answer line '{marker}<answer>'")
    return text[: match.start()].rstrip(), match.group("answer")


@importers.register("gsm8k")
class Gsm8kImporter(Importer):
    name = "gsm8k"
    description = "GSM8K problems with their reference rationale and '#### answer' (imported as reference traces)"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        answer = record.get("answer")
        return (
            "question" in record
            and find_field(record, "cot") is None
            and "steps" not in record
            and isinstance(answer, str)
            and _FINAL_LINE.search(answer) is not None
        )

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        rationale, answer = split_final_line(record["answer"], _FINAL_LINE, "`answer` field", "#### ")
        reference = strip_calculator_annotations(rationale)
        lines = tuple(line for line in reference.split("\n") if line.strip())
        if not lines:
            raise TraceError("the `answer` field has a '####' line but no rationale before it")
        return [
            Trace(
                question=record["question"],
                cot=f"{reference}\n#### {answer}",
                final_answer=answer,
                reference_answer=answer,
                reference_solution=reference,
                steps=lines,
                correct=True,
                source=self.name,
                metadata={"kind": "reference_solution"},
            )
        ]
