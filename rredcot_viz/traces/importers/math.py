r"""MATH-style problem sets: MATH / MATH-500 (``{problem, solution, answer, subject, level, unique_id}``; the
original MATH release has ``{problem, level, type, solution}`` with no ``answer``), and the competition files of
the Qwen2.5-Math harness, AIME24 (``{id, problem, question, solution, answer, url}``) and AMC23 (``{id, problem,
question, answer: float, url}``, no solution).

These hold problems, not model traces. Choice: a problem *with* a reference solution becomes the reference
solution as a trace (``cot`` = ``solution`` as given, source ``math``, ``correct=True``, metadata
``{"kind": "reference_solution"}``), which brings the problem and its reference path into the app; per docs/method.md
§3.2 the reference path P* is ``solution`` as given (it already contains ``\boxed{Y*}``), so
``reference_solution`` = ``solution``. Y* = ``answer`` (floats such as AMC's ``27.0`` written as ``27``), or
the last ``\boxed{}`` of the solution when the record has no ``answer``. A problem *without* a solution (AMC23)
cannot be a trace (a trace needs a response), so it becomes an import issue saying so, never a silent drop.
No first-error label: ``first_error`` stays None. ``trace_id`` = ``unique_id`` or ``id``.
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.answers import extract_answer
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.trace import Trace

# Fields that mark records of trace formats which also carry ``problem``/``answer`` (ProcessBench, Thought
# Anchors, our own schema, Qwen RM-scored samples), so that sniffing never claims them.
_TRACE_FIELDS = {"steps", "chunks", "trace", "cot", "response", "label", "gt_solution"}
_METADATA_FIELDS = ("subject", "level", "type", "url")


def _answer_text(answer: Any) -> str:
    """The answer as a string: ``27.0`` -> ``"27"`` (AMC stores integers as floats)."""
    if isinstance(answer, float) and answer.is_integer():
        return str(int(answer))
    return str(answer).strip()


@importers.register("math")
class MathImporter(Importer):
    name = "math"
    description = "MATH / MATH-500 / AIME / AMC problem sets (problems with a solution imported as reference traces)"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        keys = set(record)
        return "problem" in keys and bool(keys & {"solution", "answer"}) and not keys & _TRACE_FIELDS

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        solution = record.get("solution")
        if not isinstance(solution, str) or not solution.strip():
            raise TraceError(
                "record has no `solution`: a problem without a reference solution has no text to import as a "
                "trace (sample traces for it with a model, then import those)"
            )
        if record.get("answer") is not None:
            answer = _answer_text(record["answer"])
        else:
            answer = extract_answer(solution)
            if answer is None:
                raise TraceError("record has neither an `answer` field nor a \\boxed{} answer in its `solution`")
        record_id = record.get("unique_id", record.get("id"))
        metadata: dict[str, Any] = {"kind": "reference_solution"}
        metadata.update({key: record[key] for key in _METADATA_FIELDS if key in record})
        return [
            Trace(
                question=record["problem"],
                cot=solution,
                final_answer=answer,
                reference_answer=answer,
                reference_solution=solution,
                correct=True,
                source=self.name,
                trace_id=None if record_id is None else str(record_id),
                metadata=metadata,
            )
        ]
