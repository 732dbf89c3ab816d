"""The ``Trace`` data model: one reasoning trace with its question, references and labels.

Index conventions (docs/method.md §0.2): ``first_error`` is 0-based with -1 meaning "no error" (ProcessBench),
so segment t = first_error + 1; ``step_values[name][i]`` is a value of the state *before* step i
(Thought Anchors' ``accuracy``), i.e. of s_{i+1}, while ``step_scores[name][i]`` belongs to step i itself,
i.e. to segment t = i + 1 (Thought Anchors' importances, an MC estimate of sigma_{i+1}). Missing values
are NaN in memory and ``null`` in JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from functools import cached_property
from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.answers import answers_equivalent, extract_answer

SCHEMA = "rredcot.trace/1"
_CONTENT_EXCLUDED = {"source", "trace_id", "metadata"}
_TEXT_FIELDS = ("question", "cot", "final_answer", "reference_answer", "reference_solution", "prompt")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Trace:
    question: str
    cot: str
    """The model's whole response: the reasoning and, at its end, the final answer."""
    final_answer: str | None = None
    """The answer as the trace states it; extracted from ``cot`` when not given."""
    reference_answer: str | None = None
    reference_solution: str | None = None
    """A reference reasoning path for v-hat. When it contains ``\\boxed{}`` it is used as the whole path P*;
    otherwise (e.g. a GSM8K rationale) the estimators append the answer trigger and the reference answer."""
    steps: tuple[str, ...] | None = None
    """Pre-split steps, substrings of ``cot`` in order (ProcessBench ``steps``, Thought Anchors chunks)."""
    first_error: int | None = None
    """0-based index of the first wrong step, -1 = all steps correct, None = unlabelled."""
    step_labels: tuple[int, ...] | None = None
    """Per-step ratings where the source has them (PRM800K -1/0/+1, Math-Shepherd +1/-1)."""
    step_values: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """Published per-state values by name, value i belonging to the state before step i (s_{i+1})."""
    step_scores: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """Published per-step scores by name, value i belonging to step i (segment t = i + 1)."""
    correct: bool | None = None
    """The source's outcome label; None means "decide by answer checking"."""
    prompt: str | None = None
    """The exact raw prompt the trace was generated from, when known (used instead of a chat template)."""
    source: str = "user"
    trace_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.question, str) or not self.question.strip():
            raise TraceError("a trace needs a non-empty question")
        if not isinstance(self.cot, str) or not self.cot.strip():
            raise TraceError("a trace needs a non-empty chain-of-thought text (cot)")
        for name in _TEXT_FIELDS:
            value = getattr(self, name)
            found = _LONE_SURROGATE.search(value) if isinstance(value, str) else None
            if found is not None:
                raise TraceError(
                    f"{name} holds a lone surrogate (U+{ord(found.group()):04X} at character {found.start()}): half "
                    "of a UTF-16 pair, not a character, which no file or tokenizer can take; replace it with U+FFFD "
                    "(the importers do)"
                )
        for name in ("final_answer", "reference_answer", "reference_solution"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or value.strip().lower() == "nan"):
                raise TraceError(
                    f"{name} must be text or absent, got {value!r}; leave it out where the source has no value"
                )
        if self.steps is not None:
            object.__setattr__(self, "steps", tuple(self.steps))
            if not self.steps:
                raise TraceError("steps, when given, must hold at least one step")
            self.step_spans()  # validates that the steps are substrings of cot in order
        if self.step_labels is not None:
            object.__setattr__(self, "step_labels", tuple(int(v) for v in self.step_labels))
            if self.steps is None or len(self.step_labels) > len(self.steps):
                raise TraceError("step_labels need pre-split steps and may cover at most one label per step")
        for name in ("step_values", "step_scores"):
            series = {k: tuple(math.nan if x is None else float(x) for x in v) for k, v in getattr(self, name).items()}
            if self.steps is not None and any(len(v) != len(self.steps) for v in series.values()):
                raise TraceError(f"every {name} series needs one value per step ({len(self.steps)} steps)")
            object.__setattr__(self, name, series)
        if self.first_error is not None:
            limit = len(self.steps) if self.steps is not None else None
            if self.first_error < -1 or (limit is not None and self.first_error >= limit):
                raise TraceError(
                    f"first_error {self.first_error} is out of range: use -1 for no error or a 0-based step "
                    f"index below {limit if limit is not None else 'the number of steps'}"
                )

    # ------------------------------------------------------------------ derived facts
    @property
    def answer(self) -> str | None:
        """The trace's final answer: as given, else extracted from the response."""
        return self.final_answer if self.final_answer is not None else extract_answer(self.cot)

    @cached_property
    def outcome(self) -> float | None:
        """R in [0, 1]: the source's label when it has one, else answer checking against the reference (about
        0.1 ms, so kept: an import's summary and its store write each read it for every trace)."""
        if self.correct is not None:
            return float(self.correct)
        answer = self.answer
        if self.reference_answer is None or answer is None:
            return None
        return float(answers_equivalent(answer, self.reference_answer))

    @property
    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of the content (everything except source, id and metadata)."""
        content = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _CONTENT_EXCLUDED}
        content["step_values"] = _json_series(self.step_values)
        content["step_scores"] = _json_series(self.step_scores)
        blob = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def short_id(self) -> str:
        return self.content_hash[:12]

    @property
    def display_name(self) -> str:
        """What a person calls this trace: its title, else its id, else the start of its question."""
        title = self.metadata.get("title") or self.trace_id
        if title:
            return str(title)
        words = " ".join(self.question.split())
        return words if len(words) <= 50 else words[:49] + "…"

    def step_spans(self) -> list[tuple[int, int]]:
        """Character spans of the steps in ``cot``. Text between two steps (separators) belongs to the step
        before it, and leading text to the first, so the spans tile ``cot`` exactly."""
        if self.steps is None:
            raise TraceError("this trace has no pre-split steps")
        starts: list[int] = []
        cursor = 0
        for index, step in enumerate(self.steps):
            at = self.cot.find(step, cursor)
            if at < 0 or not step:
                raise TraceError(
                    f"step {index} is empty or not found in the trace text after character {cursor}; steps must be "
                    "non-empty substrings of cot, in order"
                )
            starts.append(at)
            cursor = at + len(step)
        starts[0] = 0
        ends = [*starts[1:], len(self.cot)]
        return list(zip(starts, ends, strict=True))

    def with_changes(self, **changes: Any) -> Trace:
        return replace(self, **changes)

    def with_defaults(self, reference_answer: str | None = None, correct: bool | None = None) -> Trace:
        """This trace with ``reference_answer`` where it has none, then the ``correct`` label where its outcome is
        still unknown: what a form gives the records of a file that lack them, never overriding the file."""
        trace = self
        if reference_answer and trace.reference_answer is None:
            trace = trace.with_changes(reference_answer=reference_answer)
        if correct is not None and trace.outcome is None:
            trace = trace.with_changes(correct=correct)
        return trace

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        data = {"schema": SCHEMA, **asdict(self)}
        data["steps"] = list(self.steps) if self.steps is not None else None
        data["step_labels"] = list(self.step_labels) if self.step_labels is not None else None
        data["step_values"] = _json_series(self.step_values)
        data["step_scores"] = _json_series(self.step_scores)
        return {k: v for k, v in data.items() if v not in (None, {}, [])}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known - {"schema"})
        if unknown:
            raise TraceError(f"unknown trace fields {unknown}; known fields: {sorted(known)}")
        missing = [name for name in ("question", "cot") if name not in data]
        if missing:
            raise TraceError(f"missing required trace fields {missing}")
        values = {k: v for k, v in data.items() if k in known}
        if values.get("steps") is not None:
            values["steps"] = tuple(values["steps"])
        return cls(**values)


def _json_series(series: dict[str, tuple[float, ...]]) -> dict[str, list[float | None]]:
    """Per-step series as JSON-safe lists (NaN -> null)."""
    return {name: [None if math.isnan(x) else x for x in values] for name, values in series.items()}
