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
from rredcot_viz.traces.importers.fields import apply_field_map, mapping_hint
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

    @classmethod
    @abstractmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        """Whether a record (the first of a file) looks like this format."""

    @abstractmethod
    def convert(self, record: dict[str, Any]) -> list[Trace]:
        """Traces from one record; raise ``RredcotError``/``KeyError``/``ValueError`` with a clear message."""


importers: Registry[type[Importer]] = Registry("importer")

MAX_DOCUMENT_BYTES = 1 << 30
"""A JSON array or object must be parsed whole; past this size the file should be JSONL, which streams."""
_NUL_PROBE_BYTES = 4096


def read_records(
    path: Path, encoding: str = "utf-8", display_name: str | None = None
) -> Iterator[tuple[int | None, dict[str, Any] | str]]:
    """(line, record) for every record of a JSON array, a single JSON object, or JSONL; an unparsable
    JSONL line yields (line, error message) instead of stopping the import. JSONL is streamed line by line,
    so its size is bounded by the traces kept, not the file."""
    name = display_name or str(path)
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    with open(path, "rb") as source:
        head = source.read(_NUL_PROBE_BYTES)
    if not head.strip():
        raise ImportFormatError(f"{name} is empty")
    nul = head.find(b"\x00")
    if nul >= 0 and not codec.lower().startswith(("utf-16", "utf-32")):
        raise ImportFormatError(
            f"{name} looks like a binary file (a NUL byte at offset {nul}), not JSON text; export the traces as "
            "JSON or JSONL (or, for UTF-16 text, name the encoding)"
        )
    first = _decode(head.lstrip()[:4], codec, name, 0, None, partial=True).lstrip("\ufeff")[:1]
    size = path.stat().st_size
    if first == "[" or (first == "{" and _is_single_object(path, codec, name)):
        if size > MAX_DOCUMENT_BYTES:
            raise ImportFormatError(
                f"{name} is {size / 1e9:.1f} GB of one JSON document, which must be read whole (limit "
                f"{MAX_DOCUMENT_BYTES / 1e9:.1f} GB); write it as JSONL (one record per line), which streams"
            )
        data = _parse_document(_decode(path.read_bytes(), codec, name, 0, None), name)
        for record in data if isinstance(data, list) else [data]:
            yield None, record
        return
    for number, line in _lines(path, codec, name):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            yield number, f"invalid JSON at column {error.colno} ({error.msg})"
        except RecursionError:
            yield number, "the JSON is nested too deeply to read (more than about 1000 levels)"


def _lines(path: Path, codec: str, name: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of a JSONL file, decoded one line at a time where the encoding allows."""
    if codec.lower().startswith(("utf-16", "utf-32")):  # not byte-line splittable
        yield from enumerate(_decode(path.read_bytes(), codec, name, 0, None).splitlines(), start=1)
        return
    offset = 0
    with open(path, "rb") as source:
        for number, raw in enumerate(source, start=1):
            line = _decode(raw, codec, name, offset, number)
            offset += len(raw)
            yield number, line.lstrip("\ufeff") if number == 1 else line


def _decode(raw: bytes, codec: str, name: str, offset: int, line: int | None, partial: bool = False) -> str:
    """Bytes as text; a byte the encoding cannot take is reported with its offset in the file and the fix."""
    try:
        return raw.decode(codec, errors="ignore" if partial else "strict")
    except UnicodeDecodeError as error:
        line = line if line is not None else raw.count(b"\n", 0, error.start) + 1
        where = f"offset {offset + error.start} (line {line})"
        raise ImportFormatError(
            f"{name} is not valid {codec.removesuffix('-sig')} text: byte 0x{raw[error.start]:02x} at {where} "
            "cannot be decoded. If the file is text in another encoding, name it (`--encoding latin-1` or "
            "`cp1252` on the command line, the encoding box beside the upload); a binary file cannot be imported"
        ) from None
    except LookupError:
        raise ImportFormatError(f"unknown text encoding {codec!r}; use e.g. utf-8, latin-1 or cp1252") from None


def _parse_document(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ImportFormatError(f"{name}:{error.lineno}:{error.colno}: invalid JSON ({error.msg})") from None
    except RecursionError:
        raise ImportFormatError(
            f"{name}: the JSON is nested too deeply to read (more than about 1000 levels); a trace record is a "
            "flat object of text fields"
        ) from None


def _is_single_object(path: Path, codec: str, name: str) -> bool:
    """Whether a file that starts with ``{`` is one JSON object (not JSONL): its first line must not parse
    alone, or the whole file must be that one object."""
    with open(path, "rb") as source:
        first_line = _decode(source.readline(), codec, name, 0, 1, partial=True).lstrip("\ufeff")
    try:
        json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        return True  # a pretty-printed object spans lines
    with open(path, "rb") as source:
        source.readline()
        return not any(raw.strip() for raw in source)


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


def import_file(
    path: str | Path,
    fmt: str = "auto",
    limit: int | None = None,
    *,
    field_map: dict[str, str] | None = None,
    encoding: str = "utf-8",
    display_name: str | None = None,
    split: str | None = None,
    config: str | None = None,
) -> ImportReport:
    """Read a dataset file, or a folder of them, in any registered format (``auto`` detects it from the first
    record); JSON, JSONL, parquet, Arrow and CSV/TSV files all go through the same detection (``readers``).

    ``field_map`` renames the file's fields to ours before detection (``fields.parse_field_map``);
    ``display_name`` is the name messages use (an upload's own file name rather than the server's copy);
    ``split`` and ``config`` choose among a dataset folder's splits and configs."""
    path = Path(path)
    name = display_name or str(path)
    if not path.exists():
        raise ImportFormatError(f"{name} does not exist")
    if not path.is_file() and not path.is_dir():
        raise ImportFormatError(f"{name} is not a file or a folder")
    report = ImportReport(name, fmt)
    importer: Importer | None = None if fmt == "auto" else importers.get(fmt)()
    records = iter_records(path, encoding, display_name, split=split, config=config)
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
        if importer is None:
            report.format = detect_format(record, name)
            importer = importers.get(report.format)()
        try:
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
    return report
