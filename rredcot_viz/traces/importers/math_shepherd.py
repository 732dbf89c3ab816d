"""Math-Shepherd (arXiv 2312.08935) automatically labelled solutions: ``{input, label, task}`` where ``input`` is
the question followed by ``Step k: ... ки`` for k = 1, 2, ... and ``label`` is the same text with each `` ки``
replaced by `` +`` (good) or `` -`` (bad).

Mapping: ``question`` = the text before ``Step 1:``; ``steps`` = the ``Step k: ...`` pieces with the step tag
removed; ``cot`` = those pieces as they follow each other in ``input``, without the tags. ``step_labels`` are
+1/-1 read from ``label`` at the position of each tag (``label`` is checked to be ``input`` with the tags
replaced, so a sign cannot be attributed to the wrong step). Index convention (docs/method.md §0.2): ``Step k`` is
1-based, segment t = k; ``first_error`` = 0-based position of the first ``-``, or -1 when there is none. The
labels come from MC completions, not humans, so ``correct`` is None (answer checking decides the outcome).
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.trace import Trace

STEP_TAG = " ки"
_SIGNS = {"+": 1, "-": -1}


def read_labels(text: str, label: str) -> tuple[list[str], list[int]]:
    """The tag-separated pieces of ``text`` (the last, text after the final tag, included) and the sign that
    ``label`` has in place of each tag."""
    pieces = text.split(STEP_TAG)
    signs: list[int] = []
    cursor = 0
    for index, piece in enumerate(pieces[:-1]):
        end = cursor + len(piece)
        sign = label[end + 1 : end + 2]
        if label[cursor:end] != piece or label[end : end + 1] != " " or sign not in _SIGNS:
            raise TraceError(
                f"`label` does not match `input` with step tag {index + 1} replaced by ' +' or ' -' "
                f"(found {label[end : end + 2]!r} at character {end})"
            )
        signs.append(_SIGNS[sign])
        cursor = end + 2
    if label[cursor:] != pieces[-1]:
        raise TraceError("`label` differs from `input` after the last step tag")
    return pieces, signs


@importers.register("math_shepherd")
class MathShepherdImporter(Importer):
    name = "math_shepherd"
    description = "Math-Shepherd solutions with 'Step k:' steps, 'ки' tags and automatic +/- step labels"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        text = record.get("input")
        return isinstance(text, str) and isinstance(record.get("label"), str) and STEP_TAG.strip() in text

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        text = record["input"]
        start = text.find("Step 1:")
        if start < 0:
            raise TraceError("`input` has no 'Step 1:' marking the end of the question")
        pieces, labels = read_labels(text, record["label"])
        if not labels:
            raise TraceError(f"`input` has no step tag {STEP_TAG.strip()!r}")
        if start >= len(pieces[0]):
            raise TraceError("'Step 1:' comes after the first step tag")
        pieces[0] = pieces[0][start:]
        cot = "".join(pieces).strip()
        steps = tuple(piece.strip() for piece in pieces[:-1])
        return [
            Trace(
                question=text[:start].strip(),
                cot=cot,
                steps=steps,
                step_labels=tuple(labels),
                first_error=labels.index(-1) if -1 in labels else -1,
                source=self.name,
                metadata={"task": record["task"]} if "task" in record else {},
            )
        ]
