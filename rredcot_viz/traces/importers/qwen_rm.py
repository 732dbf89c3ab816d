"""Qwen2.5-Math harness best-of-8 example (``traces/qwen_math_cot_100_rm_scored.jsonl``): per problem ``{idx,
question, gt, solution, level, system, response: [8], pred: [8], score: [8 bool], pred_score: [8 [float]], ...}``.

Mapping: one trace per sample k (a group of G = 8 per record), ``cot`` = ``response[k]``, ``final_answer`` =
``pred[k]`` (the harness's extracted answer), ``correct`` = ``score[k]`` (the harness's correctness label),
``reference_answer`` = ``gt``, ``reference_solution`` = ``solution`` (the MATH reference, docs/method.md §3.2).
``metadata``: ``group`` = ``idx`` (the group id), ``sample`` = k, ``pred``, ``rm_score`` = ``pred_score[k][0]``
(an unbounded outcome-RM score), ``level``, ``system`` (the system prompt; the exact chat prompt is not stored,
so ``prompt`` stays None). No step labels. ``trace_id`` = ``"<idx>/<k>"``.
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.trace import Trace

_PER_SAMPLE = ("response", "score", "pred", "pred_score")


@importers.register("qwen_rm")
class QwenRmImporter(Importer):
    name = "qwen_rm"
    description = "Qwen2.5-Math best-of-8 samples with correctness and outcome-RM scores (groups of 8)"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        return {"question", "response", "score", "gt"} <= set(record) and isinstance(record["response"], list)

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        lengths = {key: len(record[key]) for key in _PER_SAMPLE}
        if len(set(lengths.values())) != 1:
            raise TraceError(f"per-sample lists differ in length: {lengths}")
        group = record["idx"]
        traces = []
        for k, response in enumerate(record["response"]):
            rm_score = record["pred_score"][k]
            try:
                traces.append(
                    Trace(
                        question=record["question"],
                        cot=response,
                        final_answer=record["pred"][k],
                        reference_answer=str(record["gt"]),
                        reference_solution=record.get("solution"),
                        correct=bool(record["score"][k]),
                        source=self.name,
                        trace_id=f"{group}/{k}",
                        metadata={
                            "group": group,
                            "sample": k,
                            "pred": record["pred"][k],
                            "rm_score": float(rm_score[0] if isinstance(rm_score, list) else rm_score),
                            "level": record.get("level"),
                            "system": record.get("system"),
                        },
                    )
                )
            except TraceError as error:
                raise TraceError(f"sample {k}: {error}") from None
        return traces
