"""Where records come from: one file (JSON / JSONL, parquet, Arrow, CSV / TSV) or a folder of them (a Hugging
Face dataset snapshot, a ``save_to_disk`` folder, a TRL ``completions/`` folder, a verl rollout dump).

Each container has a registered reader that yields ``(Location, record)`` pairs, streamed: JSONL line by line,
parquet and Arrow in record batches of ``BATCH_ROWS`` (never the whole table at once), CSV row by row; a record
that cannot be read yields an error text in its place. What the records *mean* is the importers' business
(``base.detect_format``), so every container goes through the same field detection and ``--map``; CSV cells are
text except those of our typed fields (``typed_cell``).

A folder is resolved to its files once (``dataset_files``): TRL's ``completions_NNNNN.parquet`` and verl's
``<step>.jsonl`` files are taken in step order; anything else is read as a datasets layout, where a file's split
comes from its name (``train-00000-of-00002.parquet``, ``test.jsonl``, ``gsm8k-train.arrow``) or its
``save_to_disk`` folder, and its config from the folder above (``main/train-....parquet``). A folder that holds
several splits or configs needs ``split`` / ``config``; the message lists the ones it found.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from rredcot_viz.errors import ImportFormatError
from rredcot_viz.registry import Registry
from rredcot_viz.traces.importers.fields import flag_value
from rredcot_viz.traces.importers.json_records import read_records

BATCH_ROWS = 2048
"""Rows per record batch of a parquet or Arrow file: the most of a table held in memory at once."""

READ_BUFFER_BYTES = 1 << 20
"""A parquet column chunk is read through a buffer of this size, page by page, never pre-buffered whole: a file
written as one row group (pandas' default, what TRL writes) is then streamed too."""
Record = dict[str, Any] | str  # a record, or the reason it could not be read


@dataclass(frozen=True)
class Location:
    """Where a record sits: its file's short name and its 1-based line (text files) or 0-based row (tables)."""

    file: str
    line: int | None = None
    row: int | None = None


ReadFn = Callable[[Path, str, str, Any], Iterator[tuple[Location, Record]]]
readers: Registry[ReadFn] = Registry("file reader")

_SUFFIX_READER = {
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".parquet": "parquet",
    ".arrow": "arrow",
    ".arrows": "arrow",
    ".feather": "arrow",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
}
DATA_SUFFIXES = tuple(_SUFFIX_READER)
"""The file suffixes a reader takes (what a file picker offers)."""
_METADATA_FILES = {
    "dataset_info.json",
    "dataset_infos.json",
    "dataset_dict.json",
    "state.json",
    "trainer_state.json",
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "adapter_config.json",
}
_COMMON_SPLITS = {"train", "test", "validation", "valid", "dev", "eval", "evaluation"}
_SHARD = re.compile(r"^(?P<split>.+?)-\d{5}-of-\d{5}$")
JSON_COLUMNS = {"steps", "step_labels", "step_values", "step_scores", "metadata"}
"""Our trace fields a CSV cell holds as JSON (``typed_cell``)."""
_TRL_FILE = re.compile(r"^completions_(\d+)\.parquet$")
_VERL_FILE = re.compile(r"^(?:step[_-]?)?(\d+)\.jsonl$")


def reader_name(path: Path) -> str:
    """The reader for a file: from its magic bytes (parquet ``PAR1``, Arrow ``ARROW1``), else its suffix; text
    files (JSON, JSONL, anything unknown) go to the JSON reader, which names a binary file as such."""
    with open(path, "rb") as source:
        head = source.read(8)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith((b"ARROW1", b"\xff\xff\xff\xff")):  # an Arrow file; an Arrow stream's first message
        return "arrow"
    return _SUFFIX_READER.get(path.suffix.lower(), "json")


def iter_records(
    path: Path,
    encoding: str = "utf-8",
    display_name: str | None = None,
    *,
    split: str | None = None,
    config: str | None = None,
    warnings: Any = None,
) -> Iterator[tuple[Location, Record]]:
    """Every record of a file, or of every data file of a folder (``dataset_files``), in order; text readers
    report repeated keys and lone surrogates to ``warnings`` (``json_records.ImportWarnings``)."""
    files = dataset_files(path, split, config, display_name, warnings) if path.is_dir() else [path]
    for file in files:
        name = display_name if file == path and display_name else str(file)
        yield from readers.get(reader_name(file))(file, encoding, name, warnings)


def _verl_step_files(folder: Path, steps: list[Path], warnings: Any) -> list[Path]:
    """A verl folder's step dumps in step order, saying which files it leaves out and why (an empty dump: a step
    verl was killed in; another .jsonl: not named by its step, so where it goes is unknown)."""
    empty = [p.name for p in steps if p.stat().st_size == 0]
    others = sorted(p.name for p in folder.glob("*.jsonl") if p not in steps)
    if warnings is not None and empty:
        warnings.note(f"skipped {len(empty)} empty step file{'s' if len(empty) > 1 else ''}: {', '.join(empty[:5])}")
    if warnings is not None and others:
        warnings.note(
            f"skipped {len(others)} .jsonl file{'s' if len(others) > 1 else ''} not named by a step "
            f"({', '.join(others[:5])}): verl names each dump <step>.jsonl; rename one to import it, or import it alone"
        )
    kept = [p for p in steps if p.stat().st_size > 0]
    if not kept:
        raise ImportFormatError(f"{folder}: every step file is empty ({', '.join(empty[:5])})")
    return kept


def dataset_files(
    folder: Path,
    split: str | None = None,
    config: str | None = None,
    display_name: str | None = None,
    warnings: Any = None,
) -> list[Path]:
    """The data files of a folder, in reading order (see the module docstring)."""
    name = display_name or str(folder)
    for root in (folder / "completions", folder):
        steps = sorted((int(m.group(1)), p) for p in root.glob("*.parquet") if (m := _TRL_FILE.match(p.name)))
        if steps:
            return [p for _, p in steps]
    steps = sorted((int(m.group(1)), p) for p in folder.glob("*.jsonl") if (m := _VERL_FILE.match(p.name)))
    if steps:
        return _verl_step_files(folder, [p for _, p in steps], warnings)
    candidates = [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.suffix.lower() in _SUFFIX_READER
        and p.name not in _METADATA_FILES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    if not candidates:
        kinds = ", ".join(sorted(_SUFFIX_READER))
        raise ImportFormatError(f"{name} holds no data files ({kinds}); give a file or a dataset folder")
    placed = [(p, *_split_and_config(p.relative_to(folder))) for p in candidates]
    placed = _choose(placed, 2, config, "config", "--config", name)
    placed = _choose(placed, 1, split, "split", "--split", name)
    return [p for p, _, _ in placed]


def _split_and_config(relative: Path) -> tuple[str | None, str | None]:
    """(split, config) of a data file inside a datasets folder, from its name and the folders above it."""
    stem = relative.name.split(".")[0]
    folders = list(relative.parts[:-1])
    shard = _SHARD.match(stem)
    base = shard.group("split") if shard else stem
    split = None
    if (base == "data" or base.isdigit()) and folders:  # save_to_disk <split>/data-NNNNN-of-NNNNN, hub <split>/0000
        split = folders.pop()
    elif relative.suffix == ".arrow" and "-" in base:  # the datasets cache: <builder>-<split>[-NNNNN-of-NNNNN]
        split = base.rsplit("-", 1)[1]
    elif shard or base in _COMMON_SPLITS:
        split = base
    if folders and folders[-1] == split:  # <config>/<split>/<file>
        folders.pop()
    config = next((part for part in folders if part != "data"), None)
    return split, config


def _choose(
    placed: list[tuple[Path, str | None, str | None]],
    index: int,
    wanted: str | None,
    what: str,
    option: str,
    name: str,
) -> list[tuple[Path, str | None, str | None]]:
    """The files of the ``wanted`` split or config; all of them when there is at most one and none is asked."""
    found = sorted({entry[index] for entry in placed if entry[index] is not None})
    if wanted is not None:
        chosen = [entry for entry in placed if entry[index] == wanted]
        if not chosen:
            raise ImportFormatError(
                f"{name} has no {what} {wanted!r}; its {what}s: {', '.join(found) or '(none named)'}"
            )
        return chosen
    if len(found) > 1:
        raise ImportFormatError(
            f"{name} holds several {what}s ({', '.join(found)}); choose one with {option} NAME (the {what} box in "
            "the app)"
        )
    return placed


# ---------------------------------------------------------------------------------------------- the readers
@readers.register("json")
def read_json(path: Path, encoding: str, name: str, warnings: Any = None) -> Iterator[tuple[Location, Record]]:
    """A JSON array, one JSON object or JSONL, optionally gzip-compressed (``json_records.read_records``)."""
    short = Path(name).name
    for line, record in read_records(path, encoding, name, warnings):
        yield Location(short, line), record


@readers.register("parquet")
def read_parquet(path: Path, encoding: str, name: str, warnings: Any = None) -> Iterator[tuple[Location, Record]]:
    """A parquet file in record batches (the datasets and TRL format)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        source = pq.ParquetFile(path, buffer_size=READ_BUFFER_BYTES, pre_buffer=False)
    except (pa.ArrowException, OSError) as error:
        raise ImportFormatError(f"{name} is not a readable parquet file ({error})") from None
    yield from _batches(source.iter_batches(batch_size=BATCH_ROWS), name)


@readers.register("arrow")
def read_arrow(path: Path, encoding: str, name: str, warnings: Any = None) -> Iterator[tuple[Location, Record]]:
    """An Arrow IPC file or stream (what ``datasets`` writes in ``save_to_disk`` folders and its cache)."""
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            try:
                reader = pa.ipc.open_file(source)
                batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            except pa.ArrowInvalid:
                source.seek(0)
                batches = iter(pa.ipc.open_stream(source))
            yield from _batches((piece for batch in batches for piece in _slices(batch)), name)
    except (pa.ArrowInvalid, OSError) as error:
        raise ImportFormatError(f"{name} is not a readable Arrow file ({error})") from None


@readers.register("csv")
def read_csv(path: Path, encoding: str, name: str, warnings: Any = None) -> Iterator[tuple[Location, Record]]:
    """A comma-separated file with a header row; an empty cell is a missing value."""
    yield from _delimited(path, encoding, name, ",")


@readers.register("tsv")
def read_tsv(path: Path, encoding: str, name: str, warnings: Any = None) -> Iterator[tuple[Location, Record]]:
    """A tab-separated file with a header row; an empty cell is a missing value."""
    yield from _delimited(path, encoding, name, "\t")


def _slices(batch: Any) -> Iterator[Any]:
    for start in range(0, batch.num_rows, BATCH_ROWS):
        yield batch.slice(start, BATCH_ROWS)


def _batches(batches: Iterator[Any], name: str) -> Iterator[tuple[Location, Record]]:
    """The rows of record batches; a batch that cannot be decoded (a damaged page) ends the file with its row."""
    import pyarrow as pa

    short = Path(name).name
    row = 0
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError) as error:
            raise ImportFormatError(
                f"{name} is damaged: its data cannot be read past row {row} ({error}); export it again"
            ) from None
        if batch is None:
            return
        for record in batch.to_pylist():
            yield Location(short, None, row), {key: plain_value(value) for key, value in record.items()}
            row += 1


def plain_value(value: Any) -> Any:
    """A table cell as a JSON value: timestamps as ISO text, decimals as floats, bytes by their size (the
    record may be stored or written as JSON)."""
    if isinstance(value, dict):
        return {key: plain_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(item) for item in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


_BYTE_ORDER_MARKS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
                     (b"\xfe\xff", "utf-16"))  # fmt: skip


def _encoding_advice(path: Path) -> str:
    """Which ``--encoding`` to name: the one a byte-order mark announces, else the usual 8-bit ones."""
    with open(path, "rb") as source:
        head = source.read(4)
    announced = next((codec for mark, codec in _BYTE_ORDER_MARKS if head.startswith(mark)), None)
    if announced:
        return f"it starts with a {announced.upper()} byte-order mark: `--encoding {announced}`"
    return "`--encoding latin-1` or `cp1252`"


def _delimited(path: Path, encoding: str, name: str, delimiter: str) -> Iterator[tuple[Location, Record]]:
    short = Path(name).name
    csv.field_size_limit(1 << 30)  # a long response is one cell
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        with open(path, encoding=codec, newline="") as source:
            rows = csv.reader(source, delimiter=delimiter)
            header = next(rows, None)
            if not header or not any(cell.strip() for cell in header):
                raise ImportFormatError(f"{name} is empty or has no header row (the first row names the columns)")
            columns = [cell.strip() for cell in header]
            duplicated = sorted({c for c in columns if columns.count(c) > 1})
            if duplicated:
                raise ImportFormatError(f"{name}: the header names {duplicated} more than once; rename them")
            line = rows.line_num + 1
            for index, cells in enumerate(rows):
                where = Location(short, line, index)
                line = rows.line_num + 1
                if not any(cell.strip() for cell in cells):
                    continue
                if len(cells) != len(columns):
                    yield where, f"{len(cells)} cells for the header's {len(columns)} columns"
                    continue
                yield where, {name: typed_cell(name, cell) for name, cell in zip(columns, cells, strict=True)}
    except UnicodeDecodeError as error:
        raise ImportFormatError(
            f"{name} is not valid {codec.removesuffix('-sig')} text (byte 0x{error.object[error.start]:02x}); name "
            f"its encoding ({_encoding_advice(path)}, the encoding box beside the upload)"
        ) from None
    except csv.Error as error:
        raise ImportFormatError(f"{name}:{rows.line_num}: not readable as delimited text ({error})") from None
    except LookupError:
        raise ImportFormatError(f"unknown text encoding {codec!r}; use e.g. utf-8, latin-1 or cp1252") from None


def typed_cell(column: str, cell: str) -> Any:
    """A CSV cell as a value: empty is missing; a column named like one of our typed trace fields is read as that
    type (``correct`` true/false/1/0, ``first_error`` a whole number, ``steps`` and the other lists and objects as
    JSON), so a CSV written from our schema reads back; every other cell stays text."""
    if not cell.strip():
        return None
    if column == "correct":
        return flag_value(cell)
    if column == "first_error" and re.fullmatch(r"-?[0-9]+", cell.strip()):
        return int(cell)
    if column in JSON_COLUMNS and cell.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(cell)
        except json.JSONDecodeError:
            return cell  # the importer names the field and what it should be
    return cell
