"""ProcessBench (QwenLM/ProcessBench, arXiv 2412.06559): ``gsm8k.json`` / ``math.json`` etc., a JSON array of
``{id, generator, problem, steps, final_answer_correct, label}``.

Index convention: ``label`` is already ours (0-based first wrong step, -1 = all correct, docs/method.md §0.2), so
``first_error = label`` unchanged (a copy that counts steps from 1 is read with ``label_base=1``, and one
that looks 1-based gets a warning: ``base.import_file``). The response is not stored as one text, so ``cot``
is the steps joined with a blank line and ``steps`` are those exact pieces (segment t = step t with the
``given`` segmenter).
A ``reference_answer`` (or ``answer``, ``gt_answer``, ``ground_truth``...) and a ``reference_solution`` /
``solution`` field, which extended copies carry, are read (``fields.FIELD_ALIASES``).
``correct`` is ``final_answer_correct``: an outcome label that may be True even when ``label >= 0`` (§8.2).
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.importers.fields import find_field, reference_text
from rredcot_viz.traces.trace import Trace

STEP_SEPARATOR = "\n\n"


@importers.register("processbench")
class ProcessBenchImporter(Importer):
    name = "processbench"
    description = "ProcessBench first-error benchmark (problem, pre-split steps, 0-based label, -1 = correct)"
    label_field = "label"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        return {"problem", "steps", "label"} <= set(record) and isinstance(record["steps"], list)

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        steps = record["steps"]
        if not steps or not all(isinstance(step, str) and step.strip() for step in steps):
            raise TraceError("`steps` must be a non-empty list of non-empty strings")
        label = record["label"]
        if not isinstance(label, int) or isinstance(label, bool):
            raise TraceError(f"`label` must be an integer step index or -1, got {label!r}")
        correct = record.get("final_answer_correct")
        answer_field = find_field(record, "reference_answer")
        solution_field = find_field(record, "reference_solution")
        solution = record[solution_field] if solution_field else None
        if solution is not None and not isinstance(solution, str):
            raise TraceError(f"`{solution_field}` must be text, got {type(solution).__name__}")
        return [
            Trace(
                question=record["problem"],
                cot=STEP_SEPARATOR.join(steps),
                steps=tuple(steps),
                first_error=label,
                reference_answer=reference_text(record[answer_field], answer_field) if answer_field else None,
                reference_solution=(solution or "").strip() or None,
                correct=None if correct is None else bool(correct),
                source=self.name,
                trace_id=None if record.get("id") is None else str(record["id"]),
                metadata={"generator": record["generator"]} if "generator" in record else {},
            )
        ]
