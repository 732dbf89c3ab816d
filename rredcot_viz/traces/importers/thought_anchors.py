"""Thought Anchors (interp-reasoning/thought-anchors.com), the derived file
``traces/thought_anchors_r1distill_traces.jsonl``: one record per (model, condition, problem) with ``prompt``
(raw, ending in ``<think>``), ``trace`` (the reasoning, ``</think>``, the answer), ``answer``, ``is_correct``,
``gt_answer``, ``gt_solution`` and ``chunks`` (sentence chunks with MC accuracies and importances).

Mapping: ``prompt`` = record ``prompt`` (the exact raw prompt, used instead of a chat template), ``cot`` =
``trace``, ``final_answer`` = ``answer``, ``correct`` = ``is_correct``, ``reference_answer``/``reference_solution``
= ``gt_answer``/``gt_solution``. ``steps`` are the chunks located in order in the trace. The upstream chunker
normalised whitespace, so a chunk that spans a paragraph break reads ``"a. b"`` where the trace has
``"a.\\n\\nb"``; each chunk is therefore matched with any whitespace run standing for any other, and the step
is the trace's own text (the words are compared exactly; only whitespace differs). Text between two chunks
must be whitespace, so nothing of the reasoning is skipped. ``metadata["respaced_chunks"]`` counts such chunks.

Index convention (docs/method.md §0.2): ``chunk_idx`` i is 0-based, segment t = i + 1; ``accuracy[i]`` is the MC
value of the state *before* chunk i, stored as ``step_values["mc_accuracy"][i]``. The importances
(``ta_resampling_importance`` = ``accuracy[i+1] - accuracy[i]``, ``ta_counterfactual_importance``,
``ta_forced_importance``) are per chunk i, i.e. per segment t = i + 1, and go to ``step_scores``. A missing
value becomes NaN and its index is listed in ``metadata["missing_step_values"]``. ``metadata`` also holds
per-chunk ``function_tags`` and ``depends_on`` (chunk indices, converted from strings to ints), model,
condition, problem_id, level, type.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.trace import Trace

STEP_VALUE_FIELDS = {
    "mc_accuracy": "accuracy",
    "ta_resampling_importance": "resampling_importance_accuracy",
    "ta_counterfactual_importance": "counterfactual_importance_accuracy",
    "ta_forced_importance": "forced_importance_accuracy",
}
_METADATA_FIELDS = ("model", "condition", "problem_id", "level", "type")


def locate_chunks(text: str, chunks: list[str]) -> tuple[list[str], int]:
    """The chunks as exact substrings of ``text`` (in order, whitespace-tolerant) and how many needed re-spacing."""
    located: list[str] = []
    respaced = 0
    cursor = 0
    for index, chunk in enumerate(chunks):
        words = chunk.split()
        if not words:
            raise TraceError(f"chunk {index} is empty")
        match = re.compile(r"\s+".join(re.escape(word) for word in words)).search(text, cursor)
        if match is None or text[cursor : match.start()].strip():
            raise TraceError(
                f"chunk {index} is not found in the trace after character {cursor} (with only whitespace before "
                "it); the chunks must be the reasoning's sentences in order"
            )
        located.append(match.group())
        respaced += match.group() != chunk
        cursor = match.end()
    return located, respaced


@importers.register("thought_anchors")
class ThoughtAnchorsImporter(Importer):
    name = "thought_anchors"
    description = "Thought Anchors R1-distill traces with sentence chunks, MC accuracies and importances"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        return {"problem", "trace", "chunks"} <= set(record) and isinstance(record["chunks"], list)

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        chunks = record["chunks"]
        if not chunks:
            raise TraceError("`chunks` is empty")
        for position, chunk in enumerate(chunks):
            if chunk["chunk_idx"] != position:
                raise TraceError(f"chunk at position {position} has chunk_idx {chunk['chunk_idx']}; expected order")
        steps, respaced = locate_chunks(record["trace"], [chunk["chunk"] for chunk in chunks])
        series: dict[str, list[float]] = {}
        missing: dict[str, list[int]] = {}
        for name, key in STEP_VALUE_FIELDS.items():
            values = [chunk.get(key) for chunk in chunks]
            absent = [i for i, value in enumerate(values) if value is None]
            if absent:
                missing[name] = absent
            series[name] = [math.nan if value is None else float(value) for value in values]
        step_values = {"mc_accuracy": series.pop("mc_accuracy")}
        metadata: dict[str, Any] = {key: record[key] for key in _METADATA_FIELDS if key in record}
        metadata["function_tags"] = [list(chunk.get("function_tags", [])) for chunk in chunks]
        metadata["depends_on"] = [[int(i) for i in chunk.get("depends_on", [])] for chunk in chunks]
        metadata["respaced_chunks"] = respaced
        if missing:
            metadata["missing_step_values"] = missing
        correct = record.get("is_correct")
        trace_id = "/".join(str(record[key]) for key in ("model", "condition", "problem_id") if key in record)
        return [
            Trace(
                question=record["problem"],
                cot=record["trace"],
                final_answer=record.get("answer"),
                reference_answer=record.get("gt_answer"),
                reference_solution=record.get("gt_solution"),
                steps=tuple(steps),
                step_values=step_values,
                step_scores=series,
                correct=None if correct is None else bool(correct),
                prompt=record.get("prompt"),
                source=self.name,
                trace_id=trace_id or None,
                metadata=metadata,
            )
        ]
