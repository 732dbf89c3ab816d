"""Every file the project writes goes through here: written beside its target and renamed into place.

A write that fails half-way (an exception, a full disk, ``kill -9``) must never truncate or corrupt the file
the user already had, so nothing is written to the target's own name: the bytes go to a hidden temporary file
in the same folder (same file system, so the final ``os.replace`` is atomic) and only a finished write is
renamed over the target. Output paths are checked before any work starts (``check_output_path``), so a typo
in ``--out`` costs a message, not an hour of model work.

    with atomic_write(path) as sink:            # text (or mode="wb"), for code that writes a stream
        sink.write(...)
    with atomic_path(path) as partial:          # a path, for tools that write to a name (DuckDB COPY, pandas,
        frame.to_parquet(partial)               # torch.save); ``partial`` keeps the target's suffixes
    with atomic_directory(path) as partial:     # a folder (checkpoints, save_pretrained)
        model.save_pretrained(partial)
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from rredcot_viz.errors import RredcotError

PARTIAL_PREFIX = ".partial-"
"""Temporary names start with this (hidden, and matched by no ``part-*`` or ``step_*`` glob of the project)."""


class OutputPathError(RredcotError, ValueError):
    """An output path cannot be written: its folder is missing, it is a folder, or it is not writable."""


def check_output_path(path: str | Path, what: str = "output file") -> Path:
    """``path`` as a ``Path`` when a file can be written there, else ``OutputPathError`` saying why and what to
    do. Call it before any work, so that a mistyped ``--out`` fails at once."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputPathError(f"{what} {path} is a folder; give a file name inside it, e.g. {path / 'out.jsonl'}")
    if not folder.exists():
        raise OutputPathError(f"the folder of {what} {path} does not exist ({folder}); create it first (mkdir -p)")
    if not folder.is_dir():
        raise OutputPathError(f"{what} {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"{what} {path}: the folder {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputPathError(f"{what} {path} exists and is read-only")
    return path


def check_output_folder(path: str | Path, what: str = "output folder") -> Path:
    """``path`` as a ``Path`` when it is a folder or can be created as one (its parent exists), else
    ``OutputPathError``."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"{what} {path} is a file; give a folder (it is created when missing)")
    parent = path if path.exists() else path.parent
    if not parent.is_dir():
        raise OutputPathError(f"the parent of {what} {path} does not exist ({parent}); create it first (mkdir -p)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputPathError(f"{what} {path}: {parent} is not writable")
    return path


def partial_name(path: Path) -> Path:
    """A fresh hidden name beside ``path`` that keeps its suffixes (``.csv.gz`` stays compressed for DuckDB)."""
    return path.with_name(f"{PARTIAL_PREFIX}{uuid.uuid4().hex[:8]}-{path.name}")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path``; renamed onto ``path`` when the block ends without an error, removed
    when it fails (the old ``path``, if any, is untouched either way)."""
    path = Path(path)
    partial = partial_name(path)
    try:
        yield partial
        if not partial.exists():
            raise RredcotError(f"nothing was written to {path}")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8", **options: Any) -> Iterator[IO]:
    """An open file (``mode`` "w" or "wb") whose contents replace ``path`` only once the block has finished;
    flushed and synced before the rename, so a crash right after leaves either the old or the new file."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes whole files (mode 'w' or 'wb'), not {mode!r}")
    with atomic_path(path) as partial:
        text = {"encoding": encoding, **options} if mode == "w" else {}
        with open(partial, mode, **text) as sink:
            yield sink
            sink.flush()
            os.fsync(sink.fileno())


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """``Path.write_text`` that leaves the old file whole if it fails."""
    with atomic_write(path, encoding=encoding) as sink:
        sink.write(text)
    return Path(path)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """``Path.write_bytes`` that leaves the old file whole if it fails."""
    with atomic_write(path, "wb") as sink:
        sink.write(data)
    return Path(path)


@contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """A fresh temporary folder beside ``path``; when the block succeeds it replaces ``path`` (an old folder of
    that name is moved aside first and removed only after the new one is in place), else it is removed."""
    path = Path(path)
    partial = partial_name(path)
    partial.mkdir(parents=True)
    try:
        yield partial
        old = partial_name(path) if path.exists() else None
        if old is not None:
            os.replace(path, old)
        os.replace(partial, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
