"""The importer interface, the importer registry, and ``import_file`` (records come from ``readers``).

An importer turns one source record (a parsed JSON object) into zero or more ``Trace`` objects and maps the
source's native index conventions to ours once, here. A record that cannot be converted becomes an
``ImportIssue`` naming file, line and reason; nothing is dropped silently. What a record was imported despite
(a repeated key, a lone surrogate, a trace id another trace has, labels that look 1-based) becomes a warning.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rredcot_viz.errors import ConfigError, ImportFormatError, RredcotError
from rredcot_viz.registry import Registry
from rredcot_viz.traces.importers.fields import apply_field_map, mapping_hint
from rredcot_viz.traces.importers.json_records import ImportWarnings
from rredcot_viz.traces.importers.readers import iter_records
from rredcot_viz.traces.trace import Trace


@dataclass(frozen=True)
class ImportIssue:
    file: str
    line: int | None  # 1-based line in the file (JSONL, CSV), or None for records of a JSON array or a table
    record: int  # 0-based record index
    message: str
    row: int | None = None  # 0-based row of a parquet or Arrow table

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else f"row {self.row}" if self.row is not None else (
            f"record {self.record}")  # fmt: skip
        return f"{self.file}:{where}: {self.message}"


@dataclass
class ImportReport:
    path: str
    format: str
    records_read: int = 0
    traces: list[Trace] = field(default_factory=list)
    issues: list[ImportIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What some records were imported despite, one line per kind (``ImportWarnings``)."""

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
    fallback: ClassVar[bool] = False
    """A catch-all format, tried only when no specific importer claims the record."""
    label_field: ClassVar[str | None] = None
    columns: ClassVar[tuple[str, ...]] = ()  # the fields a record of this format always has (a near miss names them)
    """The record's integer first-error label (a step index, -1 = no error), which ``label_base`` shifts."""

    @classmethod
    @abstractmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        """Whether a record (the first of a file) looks like this format."""

    @abstractmethod
    def convert(self, record: dict[str, Any]) -> list[Trace]:
        """Traces from one record; raise ``RredcotError``/``KeyError``/``ValueError`` with a clear message."""


importers: Registry[type[Importer]] = Registry("importer")


def detect_format(record: dict[str, Any], display_name: str | None = None) -> str:
    """The first registered importer that claims the record; fallback importers only when no other does."""
    names = importers.names()
    ordered = [n for n in names if not importers.get(n).fallback] + [n for n in names if importers.get(n).fallback]
    matches = [name for name in ordered if importers.get(name).sniff(record)]
    if not matches:
        prefix = f"{display_name}: " if display_name else ""
        raise ImportFormatError(
            f"{prefix}cannot tell the format of the first record: {mapping_hint(record)}; or choose a format "
            f"({', '.join(names)})"
        )
    return matches[0]


LABEL_BASES = (0, 1)


def import_file(
    path: str | Path,
    fmt: str = "auto",
    limit: int | None = None,
    *,
    field_map: dict[str, str] | None = None,
    encoding: str = "utf-8",
    label_base: int = 0,
    display_name: str | None = None,
    split: str | None = None,
    config: str | None = None,
) -> ImportReport:
    """Read a dataset file, or a folder of them, in any registered format (``auto`` detects it from the first
    record); JSON, JSONL, parquet, Arrow and CSV/TSV files all go through the same detection (``readers``).

    ``field_map`` renames the file's fields to ours before detection (``fields.parse_field_map``);
    ``label_base`` 1 reads first-error labels counted from 1 (step 1 = our 0; -1 stays "no error");
    ``display_name`` is the name messages use (an upload's own file name rather than the server's copy);
    ``split`` and ``config`` choose among a dataset folder's splits and configs."""
    path = Path(path)
    name = display_name or str(path)
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be at least 1 record (leave it out to read every record), got {limit}")
    if label_base not in LABEL_BASES:
        raise ConfigError(f"label base must be 0 or 1 (the number of the first step in the labels), got {label_base}")
    if not path.exists():
        raise ImportFormatError(f"{name} does not exist")
    if not path.is_file() and not path.is_dir():
        raise ImportFormatError(f"{name} is not a file or a folder")
    report = ImportReport(name, fmt)
    warnings = ImportWarnings()
    labels = _LabelCheck(label_base)
    importer: Importer | None = None if fmt == "auto" else importers.get(fmt)()
    records = iter_records(path, encoding, display_name, split=split, config=config, warnings=warnings)
    first: dict[str, Any] | None = None
    for index, (where, record) in enumerate(records):
        if limit is not None and index >= limit:
            break
        report.records_read += 1
        short_name, line = where.file, where.line
        if isinstance(record, str) or not isinstance(record, dict):
            message = record if isinstance(record, str) else f"expected a JSON object, got {type(record).__name__}"
            report.issues.append(ImportIssue(short_name, line, index, message, where.row))
            continue
        record = apply_field_map(record, field_map or {})
        first = record if first is None else first
        if importer is None:
            report.format = detect_format(record, name)
            importer = importers.get(report.format)()
        try:
            record = labels.read(record, importer.label_field)
            converted = importer.convert(record)
            if not converted:
                raise ValueError("the record produced no traces")
            report.traces.extend(converted)
        except (RredcotError, KeyError, ValueError, TypeError, IndexError) as error:
            message = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            report.issues.append(ImportIssue(short_name, line, index, f"{report.format}: {message}", where.row))
        except RecursionError:
            message = "the record is nested too deeply to store"
            report.issues.append(ImportIssue(short_name, line, index, message, where.row))
    if report.records_read == 0:
        raise ImportFormatError(
            f"{name} holds no records: nothing to import (a table with no rows, or a header row and no data rows)"
        )
    report.warnings = warnings.lines() + labels.warnings(importer) + _repeated_ids(report.traces)
    if not report.traces and first is not None and importer is not None:
        report.warnings += near_misses(first, importer.name)
    return report


def near_misses(record: dict[str, Any], used: str) -> list[str]:
    """For records every one of which failed: the formats whose fields they nearly have (all but one or two), with
    what they lack, so the user knows which fields to add or map instead of reading every row's error."""
    lines = []
    for name in importers.names():
        columns = importers.get(name).columns
        lacking = [c for c in columns if c not in record]
        if name != used and columns and 0 < len(lacking) <= min(2, len(columns) / 2):
            have = ", ".join(f"`{c}`" for c in columns if c in record)
            lines.append(
                f"the records have {have} of the {name} format ({importers.get(name).description}) but lack "
                f"{', '.join(f'`{c}`' for c in lacking)}: add them to read the file as {name}, or map fields to a "
                f"question and a response for the plain format (`--map THEIRS=question --map THEIRS=cot`)"
            )
    return lines


class _LabelCheck:
    """Shifts 1-based first-error labels to ours, and notices 0-based reading of a file that looks 1-based: a
    label equal to the record's step count names no 0-based step, and a 1-based file has no label 0."""

    def __init__(self, base: int) -> None:
        self.base = base
        self.zeros = 0
        self.past_last = 0

    def read(self, record: dict[str, Any], label_field: str | None) -> dict[str, Any]:
        label = record.get(label_field) if label_field else None
        if not isinstance(label, int) or isinstance(label, bool):
            return record
        steps = record.get("steps")
        self.zeros += label == 0
        self.past_last += isinstance(steps, list) and label == len(steps) > 0
        if self.base == 0 or label == -1:
            return record
        if label == 0:
            raise ImportFormatError(
                f"`{label_field}` is 0, but with label base 1 steps are numbered from 1; use -1 for no error"
            )
        return {**record, label_field: label - 1}

    def warnings(self, importer: Importer | None) -> list[str]:
        if self.base != 0 or importer is None or importer.label_field is None or not self.past_last or self.zeros:
            return []
        return [
            f"the `{importer.label_field}` labels look 1-based: {self.past_last} records have a label equal to their "
            "number of steps (no such step when counting from 0; those records were refused) and none has label 0. "
            "If the file counts steps from 1, import it with `--label-base 1` (the label base beside the upload)"
        ]


def _repeated_ids(traces: list[Trace]) -> list[str]:
    """One line per trace id that names different traces (``--trace ID`` then asks which one is meant)."""
    hashes: dict[str, set[str]] = {}
    for trace in traces:
        if trace.trace_id is not None:
            hashes.setdefault(trace.trace_id, set()).add(trace.content_hash)
    repeated = {trace_id: len(found) for trace_id, found in hashes.items() if len(found) > 1}
    if not repeated:
        return []
    shown = ", ".join(f"{trace_id!r} ({count} traces)" for trace_id, count in list(repeated.items())[:5])
    more = f" and {len(repeated) - 5} more" if len(repeated) > 5 else ""
    return [
        f"{len(repeated)} trace ids name more than one trace: {shown}{more}; pick such a trace by its index or short "
        "hash"
    ]
