"""Storing a 200k-row parquet file into a collection, as a user does, while another command reads the store.

Writes (in a temporary folder, from a fixed seed, never from a dataset) a parquet file of N rows ``{question,
reasoning, answer}`` (reasoning of 200-600 characters ending in "The answer is N."), then:

- ``import``: ``python -m rredcot_viz --store S import FILE --collection bench`` in a fresh process: its wall
  time (start-up, reading the file and writing the store) and its peak resident memory (the kernel's
  high-water mark, ``VmHWM``, read every 20 ms);
- readers: while the import writes (from its first progress line on), a fresh process opens the store and
  counts its collections, one a second until the import ends: how long each waited for the file (its time
  beside the same reader's on the idle store afterwards), and what it printed while waiting;
- ``again``: the same file into a second collection (every trace already stored: memberships only);
- control: the former row-by-row insert (``executemany``, one row at a time inside DuckDB) of the first
  ``--control-rows`` rows, in this process, as rows per second.

Ends with ``rows=<N> seconds=<s> peak_mb=<mb> concurrent_reader_waited_s=<s>`` (the longest wait of a reader).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from import_parquet import text

from rredcot_viz.paths import PROJECT_ROOT

READER_EVERY_S = 1.0
READER = (
    "import sys, time; t = time.perf_counter(); from rredcot_viz.store import Store; "
    "s = Store(sys.argv[1]); n = s.collections(); print(time.perf_counter() - t, sum(n.values()))"
)


def write_parquet(path: Path, rows: int) -> None:
    import pandas as pd

    rng = random.Random(0)
    answers = [str(rng.randint(0, 999)) for _ in range(rows)]
    pd.DataFrame(
        {
            "question": [f"Question {i}: {text(rng, 60, 160)}?" for i in range(rows)],
            "reasoning": [f"{text(rng, 200, 600)}. The answer is {a}." for a in answers],
            "answer": answers,
        }
    ).to_parquet(path)


def read_store(store: Path) -> tuple[float, str]:
    """One reader in a fresh process: (seconds from its start-up to its answer, what it printed on stderr)."""
    done = subprocess.run([sys.executable, "-c", READER, str(store)], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[0]), done.stderr.strip()


def import_file(source: Path, store: Path, collection: str, readers: list[tuple[float, str]] | None) -> dict:
    """Run ``import --collection`` in a fresh process; while it writes, start a reader a second (when ``readers``
    is a list to fill). Returns its wall time, peak memory and output."""
    command = [sys.executable, "-m", "rredcot_viz", "--store", str(store), "import", str(source)]
    started = time.perf_counter()
    child = subprocess.Popen(
        [*command, "--collection", collection], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    writing, err = threading.Event(), bytearray()

    def watch() -> None:  # the progress bar's first line says the store writes have begun
        while chunk := child.stderr.read1(4096):  # type: ignore[union-attr]
            err.extend(chunk)
            if b"storing traces" in err:
                writing.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    ended = threading.Event()

    def read_while_writing() -> None:  # a reader a second from the first progress line to the import's end
        while not ended.is_set():
            if writing.wait(0.05) and not ended.is_set():
                readers.append(read_store(store))  # type: ignore[union-attr]
                ended.wait(READER_EVERY_S)

    sampler = threading.Thread(target=read_while_writing, daemon=True)
    if readers is not None:
        sampler.start()
    peak = [0.0]

    def sample_peak() -> None:  # the child's own high-water mark (its rusage after fork would count this one's)
        status = Path(f"/proc/{child.pid}/status")
        while not ended.is_set():
            with contextlib.suppress(OSError, StopIteration):
                line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
                peak[0] = max(peak[0], int(line.split()[1]) / 1024)
            time.sleep(0.02)

    sampler_of_peak = threading.Thread(target=sample_peak, daemon=True)
    sampler_of_peak.start()
    out = child.stdout.read().decode()  # type: ignore[union-attr]
    code = child.wait()
    seconds = time.perf_counter() - started
    ended.set()
    sampler_of_peak.join()
    watcher.join()
    if readers is not None:
        sampler.join()  # a reader that started before the end finishes (and counts) before the next step
    if code != 0:
        raise SystemExit(f"import failed ({code}): {err.decode()[-2000:]}")
    return {"seconds": seconds, "peak_mb": peak[0], "out": out}


def row_by_row_rate(source: Path, rows: int) -> float:
    """Control: the former write, ``executemany`` of the traces' rows into a fresh store; rows per second."""
    from rredcot_viz.store import Store
    from rredcot_viz.traces.importers import import_file as read

    traces = read(source, limit=rows).traces
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "control.duckdb")
        values = [
            (t.content_hash, t.trace_id, t.source, t.question, t.outcome, len(t.cot), json.dumps(t.to_dict()),
             "control", time.time())
            for t in traces
        ]  # fmt: skip
        started = time.perf_counter()
        with store.cursor() as cur:
            cur.executemany("INSERT OR IGNORE INTO traces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
        seconds = time.perf_counter() - started
        store.close()
    return rows / seconds


def run(rows: int, control_rows: int) -> dict:
    """Every measurement on a file of ``rows`` rows; returns the figures."""
    with tempfile.TemporaryDirectory(prefix="rredcot-store-writes-") as folder:
        source, store = Path(folder) / f"plain-{rows}.parquet", Path(folder) / "store.duckdb"
        write_parquet(source, rows)
        print(f"{rows} rows, {source.stat().st_size / 1e6:.1f} MB parquet; store {store}")
        readers: list[tuple[float, str]] = []
        first = import_file(source, store, "bench", readers)
        idle = min(read_store(store)[0] for _ in range(3))
        again = import_file(source, store, "bench-2", None)
        control = row_by_row_rate(source, min(control_rows, rows)) if control_rows else float("nan")
        size_mb = store.stat().st_size / 1e6
    waits = [max(0.0, seconds - idle) for seconds, _ in readers]
    messages = sorted({line for _, said in readers for line in said.splitlines() if line})
    return {
        "rows": rows,
        "first": first,
        "again": again,
        "idle_reader_s": idle,
        "waits": waits,
        "messages": messages,
        "control_rows_per_s": control,
        "store_mb": size_mb,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--control-rows", type=int, default=5_000, help="rows of the row-by-row control (0: none)")
    args = parser.parse_args(argv)
    os.environ.pop("RREDCOT_STORE_WAIT", None)  # the default wait, as a user has it
    result = run(args.rows, args.control_rows)
    first, again, waits = result["first"], result["again"], result["waits"]
    print(first["out"].strip())
    print(f"import --collection bench:   {first['seconds']:6.2f} s, peak {first['peak_mb']:.0f} MB "
          f"({args.rows / first['seconds']:.0f} rows/s; store {result['store_mb']:.0f} MB)")  # fmt: skip
    said = next(line for line in again["out"].splitlines() if "traces in collection" in line)
    print(f"same file into bench-2:      {again['seconds']:6.2f} s ({said})")
    print(
        f"readers during the write:    {len(waits)}, waited {max(waits, default=float('nan')):.2f} s at most, "
        f"median {sorted(waits)[len(waits) // 2] if waits else float('nan'):.2f} s (idle store: "
        f"{result['idle_reader_s']:.2f} s per reader)"
    )
    for message in result["messages"]:
        print(f"  reader said: {message}")
    print(f"control, row by row:         {result['control_rows_per_s']:.0f} rows/s "
          f"(-> {args.rows / result['control_rows_per_s']:.0f} s for {args.rows} rows)")  # fmt: skip
    print(
        f"rows={args.rows} seconds={first['seconds']:.1f} peak_mb={first['peak_mb']:.0f} "
        f"concurrent_reader_waited_s={max(waits, default=float('nan')):.2f}"
    )


if __name__ == "__main__":
    main()
