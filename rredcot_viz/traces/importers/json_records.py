"""Reading JSON and JSONL records (optionally gzip-compressed) the way every importer needs them: streamed where
the format allows, with files that are not JSON recognised by their first bytes, and repeated keys or lone
surrogates reported as warnings instead of silently kept or crashing later."""

from __future__ import annotations

import codecs
import gzip
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from rredcot_viz.errors import ImportFormatError

MAX_DOCUMENT_BYTES = 1 << 30
"""A JSON array or object must be parsed whole; past this size the file should be JSONL, which streams."""
_NUL_PROBE_BYTES = 4096
_GZIP_MAGIC = b"\x1f\x8b"
NOT_JSON: dict[str, tuple[bytes, str, str]] = {
    # kind: (leading bytes, what the file is, what to do); the first match wins, so longer marks come first
    "zip": (b"PK\x03\x04", "a zip archive", "unzip it and import the JSON or JSONL file inside"),
    "bzip2": (b"BZh", "bzip2-compressed", "decompress it first (bunzip2), or gzip it: gzip files are read as is"),
    "xz": (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (unxz), or gzip it: gzip files are read as is"),
    "utf-32": (b"\xff\xfe\x00\x00", "UTF-32 text (little-endian byte-order mark)", "{encoding}"),
    "utf-32-be": (b"\x00\x00\xfe\xff", "UTF-32 text (big-endian byte-order mark)", "{encoding}"),
    "utf-16": (b"\xff\xfe", "UTF-16 text (little-endian byte-order mark)", "{encoding}"),
    "utf-16-be": (b"\xfe\xff", "UTF-16 text (big-endian byte-order mark)", "{encoding}"),
}
"""Files that are not JSON text in the chosen encoding, recognised by their first bytes, so that the message says
what the file is instead of "binary" or "invalid JSON at column 1"."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class ImportWarnings:
    """Things worth knowing about records that were imported anyway, grouped by message, so that a file with
    100k such records gives one line per kind (with the first few places), not 100k lines."""

    def __init__(self) -> None:
        self._places: dict[str, list[str]] = {}
        self._notes: list[str] = []

    def add(self, message: str, where: str) -> None:
        self._places.setdefault(message, []).append(where)

    def note(self, line: str) -> None:
        """A line about the input as a whole (a file left out of a folder), shown as it is."""
        self._notes.append(line)

    def lines(self) -> list[str]:
        lines = list(self._notes)
        for message, places in self._places.items():
            shown = ", ".join(places[:5]) + (f" and {len(places) - 5} more" if len(places) > 5 else "")
            lines.append(f"{message} ({len(places)} record{'s' if len(places) > 1 else ''}: {shown})")
        return lines


class _Repeated(dict):
    """A JSON object in which some key occurred more than once (the last value is kept, as JSON parsers do)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        self.repeated = list(dict.fromkeys(key for key, _ in pairs if key in seen or seen.add(key)))  # type: ignore[func-returns-value]


def _loads(text: str) -> tuple[Any, bool]:
    """The parsed JSON and whether some object in it repeats a key (Python's parser keeps the last silently)."""
    repeats: list[_Repeated] = []

    def make_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        record = dict(pairs)
        if len(record) == len(pairs):
            return record
        repeats.append(_Repeated(pairs))
        return repeats[-1]

    return json.loads(text, object_pairs_hook=make_object), bool(repeats)


def _checked(value: Any, suspect: bool, where: str, warnings: ImportWarnings | None) -> Any:
    """A parsed record with what the standard parser lets through made visible: repeated keys are reported, and
    lone surrogate escapes (``"\\ud800"``: half of a UTF-16 pair, which no UTF-8 file, store or tokenizer can
    hold) are replaced with U+FFFD and reported; the record is then imported. ``suspect``: its text repeats a
    key or has a surrogate escape (else the record is returned as is, without a walk)."""
    if not suspect:
        return value
    repeated: list[str] = []
    replaced = [0]

    def clean(item: Any, path: str) -> Any:
        if isinstance(item, str):
            fixed, count = _SURROGATE.subn("\ufffd", item)
            replaced[0] += count
            return fixed
        if isinstance(item, list):
            return [clean(x, path) for x in item]
        if isinstance(item, dict):
            repeated.extend(f"{path}{key}" for key in getattr(item, "repeated", ()))
            return {clean(k, path): clean(v, f"{path}{k}.") for k, v in item.items()}
        return item

    value = clean(value, "")
    if warnings is not None and repeated:
        keys = ", ".join(f"`{key}`" for key in dict.fromkeys(repeated))
        warnings.add(f"repeated JSON key {keys}: the last value was kept", where)
    if warnings is not None and replaced[0]:
        warnings.add(
            "lone surrogate escapes (e.g. \\ud800, half of a UTF-16 pair, not a character) were replaced with "
            "U+FFFD (\ufffd); fix the file's writer if the text matters",
            where,
        )
    return value


def describe_file(head: bytes) -> tuple[str, str, str] | None:
    """(kind, what it is, what to do) for a file whose first bytes mark it as something other than JSON text."""
    return next(((kind, what, todo) for kind, (mark, what, todo) in NOT_JSON.items() if head.startswith(mark)), None)


def _not_json(name: str, head: bytes, codec: str) -> None:
    """Refuse, with what the file is and what to do, a file whose first bytes say it is not JSON text in
    ``codec`` (a UTF-16 file read as UTF-16 is fine)."""
    found = describe_file(head)
    if found is None:
        return
    kind, what, todo = found
    if kind.startswith(("utf-16", "utf-32")) and codec.lower().replace("_", "-").startswith(kind[:6]):
        return
    encoding = (
        f"read it with `--encoding {kind.removesuffix('-be')}` on the command line (the encoding box beside the "
        "upload), or save it as UTF-8"
    )
    expected = f"{codec.removesuffix('-sig')} text" if kind.startswith(("utf-16", "utf-32")) else "JSON text"
    raise ImportFormatError(f"{name} is {what}, not {expected}; {todo.format(encoding=encoding)}")


def _opener(path: Path, name: str, codec: str) -> tuple[Callable[[], IO[bytes]], bool]:
    """How to open the file's bytes, and whether they are compressed: gzip files are read through gzip
    (``traces.jsonl.gz`` imports as is); other files that are not JSON text are refused with what they are."""
    with open(path, "rb") as source:
        head = source.read(16)
    if not head.startswith(_GZIP_MAGIC):
        _not_json(name, head, codec)
        return (lambda: open(path, "rb")), False
    try:
        with gzip.open(path, "rb") as inner:
            _not_json(name, inner.read(16), codec)
    except (OSError, EOFError) as error:
        raise ImportFormatError(f"{name} is a gzip file that cannot be decompressed ({error})") from None
    return (lambda: gzip.open(path, "rb")), True  # type: ignore[return-value]


def read_records(
    path: Path,
    encoding: str = "utf-8",
    display_name: str | None = None,
    warnings: ImportWarnings | None = None,
) -> Iterator[tuple[int | None, dict[str, Any] | str]]:
    """(line, record) for every record of a JSON array, a single JSON object, or JSONL (each optionally
    gzip-compressed); an unparsable JSONL line yields (line, error message) instead of stopping the import.
    JSONL is streamed line by line, so its size is bounded by the traces kept, not the file. Repeated keys and
    lone surrogates are reported to ``warnings`` (``_checked``)."""
    name = display_name or str(path)
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    opener, compressed = _opener(path, name, codec)
    try:
        yield from _records(path, opener, compressed, codec, name, warnings)
    except (OSError, EOFError) as error:  # a truncated or corrupt gzip stream
        raise ImportFormatError(f"{name} could not be read to the end ({error})") from None


def _records(
    path: Path,
    opener: Callable[[], IO[bytes]],
    compressed: bool,
    codec: str,
    name: str,
    warnings: ImportWarnings | None,
) -> Iterator[tuple[int | None, dict[str, Any] | str]]:
    with opener() as source:
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
    if first not in ("[", "{"):
        raise ImportFormatError(_not_json_text(name, _decode(head, codec, name, 0, None, final=False)))
    if first == "[" or (first == "{" and _is_single_object(opener, codec, name)):
        if compressed:  # the size that counts is the text's, known only by reading it
            with opener() as source:
                size = len(source.read(MAX_DOCUMENT_BYTES + 1))
        else:
            size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise ImportFormatError(
                f"{name} is {size / 1e9:.1f} GB of one JSON document, which must be read whole (limit "
                f"{MAX_DOCUMENT_BYTES / 1e9:.1f} GB); write it as JSONL (one record per line), which streams"
            )
        with opener() as source:
            text = _decode(source.read(), codec, name, 0, None)
        data, repeats = _parse_document(text, name)
        suspect = repeats or _SURROGATE_ESCAPE.search(text) is not None
        for index, record in enumerate(data if isinstance(data, list) else [data]):
            yield None, _checked(record, suspect, f"record {index}", warnings)
        return
    for number, line in _lines(opener, codec, name):
        if not line.strip():
            continue
        try:
            record, repeats = _loads(line)
            suspect = repeats or _SURROGATE_ESCAPE.search(line) is not None
            yield number, _checked(record, suspect, f"line {number}", warnings)
        except json.JSONDecodeError as error:
            yield number, f"invalid JSON at column {error.colno} ({error.msg})"
        except RecursionError:
            yield number, "the JSON is nested too deeply to read (more than about 1000 levels)"


def _not_json_text(name: str, text: str) -> str:
    """The message for text that does not start with ``[`` or ``{``: CSV/TSV named as such, else its start."""
    first_line = text.lstrip("\ufeff").lstrip().split("\n", 1)[0].rstrip("\r")
    shown = first_line[:80] + ("..." if len(first_line) > 80 else "")
    if any(ord(c) < 32 and c != "\t" for c in text[:1000].replace("\n", "").replace("\r", "")):
        return f"{name} looks like a binary file (control characters at its start), not JSON text"
    delimiter = next((d for d in (",", "\t", ";") if first_line.count(d) >= 1), None)
    if delimiter is not None:
        kind = "TSV" if delimiter == "\t" else "CSV"
        suffix = ".tsv" if kind == "TSV" else ".csv"
        return (
            f"{name} looks like a {kind} file (its first line is `{shown}`), not JSON; {kind} files with a header row "
            f"import when their name ends in {suffix}: rename it to {Path(name).stem}{suffix}"
        )
    return (
        f"{name} is not JSON: it starts with `{shown}`; a trace file holds JSON objects, one per line (JSONL) or "
        "in one array"
    )


def _lines(opener: Callable[[], IO[bytes]], codec: str, name: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of a JSONL file, decoded one line at a time where the encoding allows."""
    if codec.lower().startswith(("utf-16", "utf-32")):  # not byte-line splittable
        with opener() as source:
            yield from enumerate(_decode(source.read(), codec, name, 0, None).splitlines(), start=1)
        return
    offset = 0
    with opener() as source:
        for number, raw in enumerate(source, start=1):
            line = _decode(raw, codec, name, offset, number)
            offset += len(raw)
            yield number, line.lstrip("\ufeff") if number == 1 else line


def _decode(
    raw: bytes, codec: str, name: str, offset: int, line: int | None, partial: bool = False, final: bool = True
) -> str:
    """Bytes as text; a byte the encoding cannot take is reported with its offset in the file and the fix.
    ``partial``: skip such bytes (a probe); not ``final``: ``raw`` may end inside a character (a file's head)."""
    try:
        if not final:
            return codecs.getincrementaldecoder(codec)(errors="ignore" if partial else "strict").decode(raw)
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


def _parse_document(text: str, name: str) -> tuple[Any, bool]:
    try:
        return _loads(text)
    except json.JSONDecodeError as error:
        raise ImportFormatError(f"{name}:{error.lineno}:{error.colno}: invalid JSON ({error.msg})") from None
    except RecursionError:
        raise ImportFormatError(
            f"{name}: the JSON is nested too deeply to read (more than about 1000 levels); a trace record is a "
            "flat object of text fields"
        ) from None


def _is_single_object(opener: Callable[[], IO[bytes]], codec: str, name: str) -> bool:
    """Whether a file that starts with ``{`` is one JSON object (not JSONL): its first line must not parse
    alone, or the whole file must be that one object."""
    with opener() as source:
        first_line = _decode(source.readline(), codec, name, 0, 1, partial=True).lstrip("\ufeff")
        try:
            json.loads(first_line)
        except (json.JSONDecodeError, RecursionError):
            return True  # a pretty-printed object spans lines
        return not any(raw.strip() for raw in source)
