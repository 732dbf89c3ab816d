"""The importer interface, the importer registry, and record reading shared by all formats.

An importer turns one source record (a parsed JSON object) into zero or more ``Trace`` objects and maps the
source's native index conventions to ours once, here. A record that cannot be converted becomes an
``ImportIssue`` naming file, line and reason; nothing is dropped silently.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rredcot_viz.errors import ImportFormatError, RredcotError
from rredcot_viz.registry import Registry
from rredcot_viz.traces.trace import Trace


@dataclass(frozen=True)
class ImportIssue:
    file: str
    line: int | None  # 1-based line in the file (JSONL), or None for records of a JSON array
    record: int  # 0-based record index
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else f"record {self.record}"
        return f"{self.file}:{where}: {self.message}"


@dataclass
class ImportReport:
    path: str
    format: str
    records_read: int = 0
    traces: list[Trace] = field(default_factory=list)
    issues: list[ImportIssue] = field(default_factory=list)

    @property
    def records_failed(self) -> int:
        return len({issue.record for issue in self.issues})

    def summary(self) -> dict[str, Any]:
        outcomes = [t.outcome for t in self.traces]
        return {
            "file": self.path,
            "format": self.format,
            "records_read": self.records_read,
            "records_failed": self.records_failed,
            "traces": len(self.traces),
            "correct": sum(1 for o in outcomes if o == 1.0),
            "failed": sum(1 for o in outcomes if o == 0.0),
            "outcome_unknown": sum(1 for o in outcomes if o is None),
            "with_steps": sum(1 for t in self.traces if t.steps is not None),
            "with_first_error_label": sum(1 for t in self.traces if t.first_error is not None),
            "with_reference_answer": sum(1 for t in self.traces if t.reference_answer is not None),
            "with_reference_solution": sum(1 for t in self.traces if t.reference_solution is not None),
            "with_published_values": sum(1 for t in self.traces if t.step_values or t.step_scores),
        }


class Importer(ABC):
    """Reads one source format. Subclasses set ``name`` and ``description`` and implement both methods."""

    name: ClassVar[str]
    description: ClassVar[str]

    @classmethod
    @abstractmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        """Whether a record (the first of a file) looks like this format."""

    @abstractmethod
    def convert(self, record: dict[str, Any]) -> list[Trace]:
        """Traces from one record; raise ``RredcotError``/``KeyError``/``ValueError`` with a clear message."""


importers: Registry[type[Importer]] = Registry("importer")


def read_records(path: Path) -> Iterator[tuple[int | None, dict[str, Any] | str]]:
    """(line, record) for every record of a JSON array, a single JSON object, or JSONL; an unparsable
    JSONL line yields (line, error message) instead of stopping the import."""
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if not stripped:
        raise ImportFormatError(f"{path} is empty")
    if stripped[0] == "[" or (stripped[0] == "{" and _is_single_object(stripped)):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ImportFormatError(f"{path}:{error.lineno}:{error.colno}: invalid JSON ({error.msg})") from None
        for record in data if isinstance(data, list) else [data]:
            yield None, record
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            yield number, f"invalid JSON at column {error.colno} ({error.msg})"


def _is_single_object(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def detect_format(record: dict[str, Any]) -> str:
    matches = [name for name in importers.names() if importers.get(name).sniff(record)]
    if not matches:
        raise ImportFormatError(
            f"cannot tell the format of a record with fields {sorted(record)[:12]}; pass one of "
            f"{', '.join(importers.names())} explicitly"
        )
    return matches[0]


def import_file(path: str | Path, fmt: str = "auto", limit: int | None = None) -> ImportReport:
    """Read a dataset file in any registered format (``auto`` detects it from the first record)."""
    path = Path(path)
    if not path.is_file():
        raise ImportFormatError(f"{path} does not exist or is not a file")
    report = ImportReport(str(path), fmt)
    importer: Importer | None = None if fmt == "auto" else importers.get(fmt)()
    for index, (line, record) in enumerate(read_records(path)):
        if limit is not None and index >= limit:
            break
        report.records_read += 1
        if isinstance(record, str) or not isinstance(record, dict):
            message = record if isinstance(record, str) else f"expected a JSON object, got {type(record).__name__}"
            report.issues.append(ImportIssue(path.name, line, index, message))
            continue
        if importer is None:
            report.format = detect_format(record)
            importer = importers.get(report.format)()
        try:
            converted = importer.convert(record)
            if not converted:
                raise ValueError("the record produced no traces")
            report.traces.extend(converted)
        except (RredcotError, KeyError, ValueError, TypeError, IndexError) as error:
            message = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            report.issues.append(ImportIssue(path.name, line, index, f"{report.format}: {message}"))
    return report
