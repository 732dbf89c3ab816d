"""Importing a 100k-row parquet file: time and peak memory of the streamed reader, against a whole-table read.

Writes (under bench/out/, from a fixed seed, never from a dataset) a datasets-style parquet file of N rows
``{question, response, answer}`` with responses of 200-600 characters, and a TRL completions file of N rows
(chat prompts, two rewards, an extra column, the advantage). Each measurement runs in a fresh process, so its
peak resident memory (sampled every 2 ms from ``/proc``) is its own, counted from the same process after its
imports:

- ``import``: ``import_file`` on the N-row file, every trace kept (what ``import --out`` does);
- ``stream``: the records only, nothing kept, on N and 4N rows: flat peak memory = bounded by the batch;
- control ``pandas``: the whole table read at once (``pandas.read_parquet(...).to_dict("records")``), what
  an unstreamed reader would hold before converting anything.

Ends with ``rows=<N> import_s=<s> rows_per_s=<r> import_peak_mb=<mb> stream_peak_mb=<mb> stream_peak_mb_4x=<mb>
pandas_peak_mb=<mb> trl_import_s=<s>``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

OUT = Path(__file__).parent / "out" / "import_parquet"
WORDS = ("the", "of", "and", "to", "in", "is", "that", "it", "for", "as", "with", "was", "on", "be", "by", "this")


def text(rng: random.Random, low: int, high: int) -> str:
    length = rng.randint(low, high)
    pieces: list[str] = []
    while sum(len(p) + 1 for p in pieces) < length:
        pieces.append(rng.choice(WORDS) if rng.random() < 0.85 else str(rng.randint(0, 999)))
    return " ".join(pieces)


def write_files(rows: int) -> dict[str, Path]:
    import pandas as pd

    OUT.mkdir(parents=True, exist_ok=True)
    paths = {"plain": OUT / f"plain-{rows}.parquet", "trl": OUT / f"completions_{rows:05d}.parquet"}
    if all(p.is_file() for p in paths.values()):
        return paths
    rng = random.Random(0)
    answers = [str(rng.randint(0, 999)) for _ in range(rows)]
    responses = [f"{text(rng, 200, 600)}. The answer is {a}." for a in answers]
    questions = [f"Question {i}: {text(rng, 60, 160)}?" for i in range(rows)]
    pd.DataFrame({"question": questions, "response": responses, "answer": answers}).to_parquet(paths["plain"])
    pd.DataFrame(
        {
            "step": [1] * rows,
            "prompt": [[{"role": "user", "content": q}] for q in questions],
            "completion": [[{"role": "assistant", "content": r}] for r in responses],
            "accuracy_reward": [float(rng.random() < 0.4) for _ in range(rows)],
            "format_reward": [1.0] * rows,
            "solution": answers,
            "advantage": [rng.gauss(0, 1) for _ in range(rows)],
        }
    ).to_parquet(paths["trl"])  # as TRL writes it: pandas' defaults, one row group
    return paths


def resident_mb() -> float:
    """This process's resident memory now (Linux ``/proc``)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class PeakSampler(threading.Thread):
    """The largest resident memory seen, sampled every 2 ms while the measured work runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak, self.running = resident_mb(), True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, resident_mb())
            time.sleep(0.002)

    def stop(self) -> float:
        self.running = False
        self.join()
        return max(self.peak, resident_mb())


def measure(mode: str, path: str) -> None:
    """One measurement in this (fresh) process; prints one JSON line."""
    import pyarrow.parquet  # noqa: F401  (loaded before the baseline: every mode needs it)

    from rredcot_viz.traces.importers import import_file
    from rredcot_viz.traces.importers.readers import iter_records

    gc.collect()
    baseline = resident_mb()
    sampler = PeakSampler()
    sampler.start()
    started = time.perf_counter()
    if mode == "import":
        report = import_file(path)
        count, issues = len(report.traces), len(report.issues)
    elif mode == "stream":
        count, issues = sum(1 for _ in iter_records(Path(path))), 0
    else:
        import pandas as pd

        records = pd.read_parquet(path).to_dict("records")
        count, issues = len(records), 0
    seconds = time.perf_counter() - started
    peak = sampler.stop()
    print(json.dumps({"count": count, "issues": issues, "seconds": seconds, "peak_mb": peak - baseline}))


def run(mode: str, path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--measure", mode, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--measure", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        measure(*args.measure)
        return
    paths = write_files(args.rows)
    four = write_files(4 * args.rows)["plain"]
    size = paths["plain"].stat().st_size / 1e6
    print(f"{args.rows} rows, {size:.1f} MB parquet ({OUT}); each measurement in a fresh process")
    plain = run("import", paths["plain"])
    trl = run("import", paths["trl"])
    stream, stream4 = run("stream", paths["plain"]), run("stream", four)
    whole = run("pandas", paths["plain"])
    assert plain["count"] == trl["count"] == args.rows and not plain["issues"] and not trl["issues"]
    assert stream4["count"] == 4 * args.rows
    for name, result in (("import (plain, traces kept)", plain), ("import (TRL completions)", trl),
                         (f"stream {args.rows} rows", stream), (f"stream {4 * args.rows} rows", stream4),
                         ("control: pandas whole table", whole)):  # fmt: skip
        print(f"{name:32s} {result['seconds']:6.2f} s  peak +{result['peak_mb']:7.1f} MB  ({result['count']} records)")
    print(
        f"rows={args.rows} import_s={plain['seconds']:.2f} rows_per_s={args.rows / plain['seconds']:.0f} "
        f"import_peak_mb={plain['peak_mb']:.0f} stream_peak_mb={stream['peak_mb']:.0f} "
        f"stream_peak_mb_4x={stream4['peak_mb']:.0f} pandas_peak_mb={whole['peak_mb']:.0f} "
        f"trl_import_s={trl['seconds']:.2f}"
    )


if __name__ == "__main__":
    main()
