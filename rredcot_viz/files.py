"""Every file the project writes goes through here: written beside its target and renamed into place.

A write that fails half-way (an exception, a full disk, ``kill -9``) must never truncate or corrupt the file
the user already had, so nothing is written to the target's own name: the bytes go to a hidden temporary file
in the same folder (same file system, so the final ``os.replace`` is atomic) and only a finished write is
renamed over the target. Output paths are checked before any work starts (``check_output_path``), so a typo
in ``--out`` costs a message, not an hour of model work.

What a path names decides what is written (``write_target``): a regular file is replaced and keeps its mode (a
600 file stays 600); a symlink is followed, as the shell's ``>`` does, so the file it points to is replaced and
the link stays; anything else (a folder, a FIFO, a device such as ``/dev/null``) is refused with a message,
never replaced. CSV cells go through ``spreadsheet_cell``, so that a spreadsheet never runs a cell as a formula.

    with atomic_write(path) as sink:            # text (or mode="wb"), for code that writes a stream
        sink.write(...)
    with atomic_path(path) as partial:          # a path, for tools that write to a name (DuckDB COPY, pandas,
        frame.to_parquet(partial)               # torch.save); ``partial`` keeps the target's suffixes
    with atomic_directory(path) as partial:     # a folder (checkpoints, save_pretrained)
        model.save_pretrained(partial)
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from rredcot_viz.errors import RredcotError

PARTIAL_PREFIX = ".partial-"
"""Temporary names start with this (hidden, and matched by no ``part-*`` or ``step_*`` glob of the project)."""
FORMULA_FIRST = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell that starts with one of these is run as a formula by spreadsheets (CSV injection, OWASP)."""
PLAIN_NUMBER = r"[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?"
"""Text that is only a number (-3, +1.5e3): a spreadsheet reads it as that number, so it is left as it is. The
same syntax in Python's ``re`` and DuckDB's RE2 (the store's CSV export applies the same rule in SQL)."""
NOT_A_FILE = {
    stat.S_ISFIFO: "a named pipe (FIFO)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


class OutputPathError(RredcotError, ValueError):
    """An output path cannot be written: its folder is missing, it is a folder, a device or a FIFO, or it is not
    writable."""


def spreadsheet_cell(value: Any) -> Any:
    """``value`` for a CSV cell: text a spreadsheet would run as a formula gets a leading ``'``, which makes it
    text (OWASP's advice); numbers, and text that is only a number, stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_FIRST) and not re.fullmatch(PLAIN_NUMBER, value):
        return "'" + value
    return value


def write_target(path: str | Path, what: str = "output file") -> Path:
    """The file a write to ``path`` replaces: a symlink's target (the link stays a link); ``OutputPathError``
    when ``path`` names a folder, a FIFO, a device or a socket, which a file renamed over it would destroy."""
    path = Path(path)
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return target  # a new file (a missing folder is check_output_path's message)
    except OSError as error:
        raise OutputPathError(f"{what} {path} cannot be used: {error.strerror}") from None
    if stat.S_ISREG(mode):
        return target
    if stat.S_ISDIR(mode):
        raise OutputPathError(f"{what} {path} is a folder; give a file name inside it, e.g. {path / 'out.jsonl'}")
    kind = next((name for is_kind, name in NOT_A_FILE.items() if is_kind(mode)), "not a regular file")
    link = f" (a link to {target})" if target != Path(os.path.abspath(path)) else ""
    raise OutputPathError(
        f"{what} {path}{link} is {kind}; rredcot_viz writes only regular files, which it replaces whole: "
        "give a file name"
    )


def check_output_path(path: str | Path, what: str = "output file") -> Path:
    """``path`` as a ``Path`` when a file can be written there, else ``OutputPathError`` saying why and what to
    do. Call it before any work, so that a mistyped ``--out`` fails at once."""
    path = Path(path)
    target = write_target(path, what)
    folder = target.parent
    if not folder.exists():
        raise OutputPathError(f"the folder of {what} {path} does not exist ({folder}); create it first (mkdir -p)")
    if not folder.is_dir():
        raise OutputPathError(f"{what} {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"{what} {path}: the folder {folder} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputPathError(f"{what} {path} exists and is read-only")
    check_creatable(folder, path, what)
    return path


def check_creatable(folder: Path, path: str | Path, what: str) -> None:
    """``OutputPathError`` unless a file can be created in ``folder``, tried for real: ``/proc`` and ``/sys``
    pass every permission check and still refuse new files."""
    probe = partial_name(folder / "probe")
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError as error:
        raise OutputPathError(
            f"{what} {path}: no file can be created in {folder} ({error.strerror}); choose another folder"
        ) from None
    probe.unlink()


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
    check_creatable(parent, path, what)
    return path


def partial_name(path: Path) -> Path:
    """A fresh hidden name beside ``path`` that keeps its suffixes (``.csv.gz`` stays compressed for DuckDB)."""
    return path.with_name(f"{PARTIAL_PREFIX}{uuid.uuid4().hex[:8]}-{path.name}")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside the file ``path`` names (``write_target``: a symlink's target); renamed onto it
    with the old file's mode when the block ends without an error, removed when it fails (the old file, if any,
    is untouched either way)."""
    target = write_target(path)
    check_creatable(target.parent, path, "output file")
    partial = partial_name(target)
    try:
        yield partial
        if not partial.exists():
            raise RredcotError(f"nothing was written to {path}")
        with contextlib.suppress(FileNotFoundError):  # a new file keeps the mode it was created with
            os.chmod(partial, stat.S_IMODE(target.stat().st_mode))
        os.replace(partial, target)
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
