"""Safe file writes (rredcot_viz/files.py): a write that fails, or a process killed mid-write, leaves the old
file as it was; output paths are checked with a message before any work."""

from __future__ import annotations

import os
import re
import signal
import stat
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
    spreadsheet_cell,
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


def test_a_replaced_file_keeps_its_mode(tmp_path):
    """A 600 file came back 644: the temporary file's mode replaced the user's."""
    secret = tmp_path / "secret.jsonl"
    secret.write_bytes(OLD)
    secret.chmod(0o600)
    write_text(secret, "new\n")
    assert secret.read_text() == "new\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
    with atomic_path(secret) as partial:  # a tool that writes by name (DuckDB COPY) too
        partial.write_bytes(b"tool\n")
        partial.chmod(0o644)
    assert secret.read_bytes() == b"tool\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    """The link became a regular file and the file it pointed to was left stale; now the target is written."""
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "results.jsonl"
    target.write_bytes(OLD)
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    assert check_output_path(link) == link
    write_text(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n" and leftovers(tmp_path) == [] and leftovers(target.parent) == []
    dangling = tmp_path / "next.jsonl"
    dangling.symlink_to(tmp_path / "data" / "new.jsonl")  # a link to a file not written yet: created there
    write_text(dangling, "first\n")
    assert dangling.is_symlink() and (tmp_path / "data" / "new.jsonl").read_text() == "first\n"


def test_what_is_not_a_regular_file_is_refused_and_left_as_it_was(tmp_path):
    """A FIFO or a device node was replaced by a regular file (as root, --out /dev/full replaced the device)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    through_link = tmp_path / "to-pipe"
    through_link.symlink_to(fifo)
    refused = [(fifo, "a named pipe"), (through_link, "a named pipe"), (Path(os.devnull), "a character device")]
    for path, kind in refused:
        with pytest.raises(OutputPathError, match=f"{re.escape(str(path))}.* is {kind}.*; rredcot_viz writes only"):
            check_output_path(path)
        with pytest.raises(OutputPathError, match=f"is {kind}"), atomic_write(path) as sink:
            sink.write("never written\n")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and through_link.is_symlink()
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode) and leftovers(tmp_path) == []
    with pytest.raises(OutputPathError, match="is a folder; give a file name inside it"), atomic_path(tmp_path):
        pass


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_that_refuses_new_files_is_a_message():
    """/proc passes every permission check (as root) and still creates no file: a traceback, now a message."""
    with pytest.raises(OutputPathError, match=r"output file /proc/x.jsonl: no file can be created in /proc"):
        check_output_path("/proc/x.jsonl")
    with pytest.raises(OutputPathError, match=r"output folder /proc/out: no file can be created in /proc"):
        check_output_folder("/proc/out")
    with pytest.raises(OutputPathError, match="no file can be created in /proc"):
        write_text("/proc/x.html", "<html></html>")


def test_spreadsheet_cells_that_would_run_start_with_a_quote():
    for formula in ["=1+1", "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(A1:A9)", "\t=1", "\r=1", "- item"]:
        assert spreadsheet_cell(formula) == "'" + formula
    for kept in ["-3", "+1.5e3", "-.5", "plain text", "a = b", "", -2.5, -3, None, True]:
        assert spreadsheet_cell(kept) == kept
