"""Our own schema (``rredcot.trace/1``): one ``Trace.to_dict()`` object per JSONL line or JSON array item."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.trace import SCHEMA, Trace

_TRACE_FIELDS = {f.name for f in fields(Trace)}


@importers.register("native")
class NativeImporter(Importer):
    name = "native"
    description = "RREDCoT Explorer's own trace schema (what `import --out` and the app write)"
    label_field = "first_error"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        # Untagged records count as ours only when every field is one of ours; the rest go to `plain`.
        return record.get("schema") == SCHEMA or ({"question", "cot"} <= set(record) <= _TRACE_FIELDS)

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        return [Trace.from_dict(record)]
