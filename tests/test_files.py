"""Safe file writes (rredcot_viz/files.py): a write that fails, or a process killed mid-write, leaves the old
file as it was; output paths are checked with a message before any work."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rredcot_viz
from rredcot_viz.files import (
    PARTIAL_PREFIX,
    OutputPathError,
    atomic_directory,
    atomic_path,
    atomic_write,
    check_output_folder,
    check_output_path,
    write_bytes,
    write_text,
)

OLD = b"the user's old file\n"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(PARTIAL_PREFIX))


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_bytes(OLD)
    with pytest.raises(RuntimeError, match="half-way"), atomic_write(target) as sink:
        sink.write("new first line\n")
        raise RuntimeError("half-way")
    assert target.read_bytes() == OLD and leftovers(tmp_path) == []
    with atomic_write(target) as sink:
        sink.write("new\n")
    assert target.read_text() == "new\n" and leftovers(tmp_path) == []


def test_text_bytes_and_a_path_for_tools_that_write_by_name(tmp_path):
    assert write_text(tmp_path / "a.txt", "héllo").read_text(encoding="utf-8") == "héllo"
    assert write_bytes(tmp_path / "b.bin", b"\x00\x01").read_bytes() == b"\x00\x01"
    target = tmp_path / "x.csv.gz"
    with atomic_path(target) as partial:
        assert partial.parent == tmp_path and partial.name.endswith("-x.csv.gz")  # suffixes kept (compression)
        partial.write_bytes(b"data")
    assert target.read_bytes() == b"data"
    target.write_bytes(OLD)
    with pytest.raises(Exception, match="nothing was written"), atomic_path(target):
        pass  # the tool wrote nothing: the old file stays
    assert target.read_bytes() == OLD and leftovers(tmp_path) == []


def test_a_folder_is_replaced_whole_or_not_at_all(tmp_path):
    target = tmp_path / "step_0004"
    target.mkdir()
    (target / "state.pt").write_bytes(OLD)
    with pytest.raises(RuntimeError), atomic_directory(target) as partial:
        (partial / "state.pt").write_bytes(b"half")
        raise RuntimeError("killed mid-save")
    assert (target / "state.pt").read_bytes() == OLD and leftovers(tmp_path) == []
    with atomic_directory(target) as partial:
        (partial / "state.pt").write_bytes(b"new")
    assert sorted(p.name for p in target.iterdir()) == ["state.pt"] and (target / "state.pt").read_bytes() == b"new"
    assert leftovers(tmp_path) == []


def test_output_paths_are_checked_with_what_to_do(tmp_path):
    assert check_output_path(tmp_path / "fine.jsonl") == tmp_path / "fine.jsonl"
    with pytest.raises(OutputPathError, match=r"the folder of output file .*missing/x.jsonl does not exist"):
        check_output_path(tmp_path / "missing" / "x.jsonl")
    with pytest.raises(OutputPathError, match=r"is a folder; give a file name inside it"):
        check_output_path(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match="is a file, not a folder"):
        check_output_path(tmp_path / "file" / "x.jsonl")
    assert check_output_folder(tmp_path / "new") == tmp_path / "new"  # created later, its parent exists
    with pytest.raises(OutputPathError, match="is a file; give a folder"):
        check_output_folder(tmp_path / "file")
    with pytest.raises(OutputPathError, match="does not exist"):
        check_output_folder(tmp_path / "a" / "b")


WRITER = textwrap.dedent(
    """
    import sys, time
    from rredcot_viz.traces.io import write_jsonl
    from rredcot_viz.traces.trace import Trace

    def traces():
        for i in range(3):
            yield Trace(f"Q{i}?", f"answer {i}")
        print("written", flush=True)
        time.sleep(120)  # killed here, mid-write
        yield Trace("never", "reached")

    write_jsonl(traces(), sys.argv[1])
    """
)


def test_kill_9_mid_write_keeps_the_old_bytes(tmp_path):
    """`import --out EXISTING.jsonl` truncated the file before writing; now the old bytes survive even kill -9."""
    target = tmp_path / "EXISTING.jsonl"
    target.write_bytes(OLD)
    process = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "written"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert target.read_bytes() == OLD
    assert len(leftovers(tmp_path)) == 1  # the killed write's hidden file beside it, never the user's file


WRITES = re.compile(
    r"open\([^)]*['\"][wa]b?['\"]|\.write_text\(|\.write_bytes\(|\.to_parquet\(|\.to_csv\([^i)]|torch\.save\(|"
    r"save_pretrained\(|COPY \("
)
WRITES_ELSEWHERE = {  # files written inside a folder that is itself temporary, with why
    "model/fetch.py": {"pins.write_text(", 'open(out, "wb")'},  # the fetch's own temporary folder / partial path
}


def test_every_file_the_library_writes_goes_through_the_helper():
    """A write straight to a user-visible name would truncate the old file first: every write in the package
    targets a ``partial`` name from ``rredcot_viz.files`` (or a temporary folder of its own)."""
    root = Path(rredcot_viz.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative == "files.py":
            continue
        allowed = WRITES_ELSEWHERE.get(relative, set())
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("#")[0]
            if WRITES.search(code) and "partial" not in code and not any(a in code for a in allowed):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []
