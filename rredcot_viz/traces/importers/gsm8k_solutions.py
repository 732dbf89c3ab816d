r"""GSM8K example model solutions (openai/grade-school-math ``example_model_solutions.jsonl``): per problem
``{question, ground_truth, 6b_finetuning, 6b_verification, 175b_finetuning, 175b_verification}``, each model
field ``{is_correct, solution}`` holding a GPT-3 solution that ends in ``A: <answer>``.

Mapping: one trace per model field (4 per record, in the file's field order), ``cot`` = the solution as written
(annotations kept: they are part of what the model generated), ``correct`` = ``is_correct`` (the source's
outcome label), ``metadata["model"]`` = the field name. Y* = the ground truth's final ``A: `` (or ``#### ``)
line; U* = the ground-truth rationale before that line with ``<<...>>`` annotations removed (docs/method.md §3.2),
as in the ``gsm8k`` importer. No step labels: ``first_error`` is None. The file has no ids, so ``trace_id`` is
None (line i matches line i of ``test.jsonl``).
"""

from __future__ import annotations

import re
from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.importers.gsm8k import split_final_line, strip_calculator_annotations
from rredcot_viz.traces.trace import Trace

_ANSWER_LINE = re.compile(r"(?:^|\n)(?:A:|####)[ \t]*(?P<answer>[^\n]*?)\s*$")


def _is_solution(value: Any) -> bool:
    return isinstance(value, dict) and {"is_correct", "solution"} <= set(value)


@importers.register("gsm8k_solutions")
class Gsm8kSolutionsImporter(Importer):
    name = "gsm8k_solutions"
    description = "GSM8K example GPT-3 solutions: 4 outcome-labelled traces per problem, reference from ground_truth"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        return {"question", "ground_truth"} <= set(record) and any(_is_solution(v) for v in record.values())

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        rationale, answer = split_final_line(record["ground_truth"], _ANSWER_LINE, "`ground_truth`", "A: ")
        reference = strip_calculator_annotations(rationale)
        models = [key for key, value in record.items() if _is_solution(value)]
        if not models:
            raise TraceError("the record has no model solution field ({is_correct, solution} object)")
        traces = []
        for model in models:
            solution = record[model]
            try:
                traces.append(
                    Trace(
                        question=record["question"],
                        cot=solution["solution"],
                        reference_answer=answer,
                        reference_solution=reference,
                        correct=bool(solution["is_correct"]),
                        source=self.name,
                        metadata={"model": model},
                    )
                )
            except TraceError as error:
                raise TraceError(f"solution {model!r}: {error}") from None
        return traces
