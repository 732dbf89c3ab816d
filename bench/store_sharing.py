"""What sharing the store between processes costs, and what reading a file costs the command line.

(a) CLI start-up: CPU seconds of ``python -m rredcot_viz import tiny.jsonl --out x.jsonl`` beside its controls:
    the interpreter alone, building every command's options (what each command paid before only the chosen
    one was built), and importing torch + transformers.
(b) A store call's cost, on a store of realistic size: with the file held across calls (the old design), in a
    burst (the file kept ``linger`` s after a call: a page rerun's queries), and reopened for every call
    (``linger=0``); for a read (the jobs panel's row) and a write (one packed chunk of boundary scores).
(c) Two processes: a writer that logs a training step every 0.5 s while this process reads the run and exports
    it every 0.2 s; how long the reader waited, and whether any call failed. Control: a holder that never lets go
    (the old one-process-per-file behaviour) makes the same reader fail.

Last line: ``import_cpu_s=<x> full_parser_cpu_s=<x> torch_import_cpu_s=<x> python_cpu_s=<x> held_ms=<x>
burst_ms=<x> reopen_ms=<x> reader_alone_ms_p50=<x> reader_wait_ms_p50=<x> reader_wait_ms_max=<x> failures=<n>
held_control_fails=<0|1>``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.store import Store, StoreLockedError
from rredcot_viz.store.base import LINGER_S
from rredcot_viz.traces.io import sample_traces

RUNS = 5  # child processes per start-up figure (their median)
WRITER_STEPS = 40


def cpu_seconds(code: list[str], runs: int = RUNS) -> float:
    """Median user + system CPU seconds of a child process over ``runs`` runs."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    spent = []
    for _ in range(runs):
        before = os.times()
        subprocess.run(code, env=env, check=True, stdout=subprocess.DEVNULL, cwd=PROJECT_ROOT)
        after = os.times()
        spent.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return statistics.median(spent)


def startup(folder: Path, runs: int = RUNS) -> dict[str, float]:
    tiny = folder / "tiny.jsonl"
    tiny.write_text(json.dumps({"question": "What is 1 + 1?", "cot": "1 + 1 = 2.", "reference_answer": "2"}) + "\n")
    commands = {
        "import_cpu_s": ["-m", "rredcot_viz", "import", str(tiny), "--out", str(folder / "x")],
        "full_parser_cpu_s": ["-c", "from rredcot_viz.cli import build_parser; build_parser()"],
        "torch_import_cpu_s": ["-c", "import torch, transformers"],
        "python_cpu_s": ["-c", "pass"],
    }
    return {name: cpu_seconds([sys.executable, *command], runs) for name, command in commands.items()}


def filled_store(path: Path, contexts: int = 40) -> Store:
    """A store with the sample traces, ``contexts`` x 200 boundary scores (8k by default) and a job row, like one
    after a few analyses."""
    store = Store(path)
    store.put_traces(sample_traces(), "samples")
    rng = np.random.default_rng(0)
    for context in range(contexts):
        store.save_scores(f"ctx{context}", "series", {p: rng.random(24) for p in range(200)})
    store.put_job({"job_id": "j", "kind": "mc", "job_key": "k", "label": "job", "status": "running", "done": 1,
                   "total": 9, "unit": "states", "message": "", "error": None, "result": None, "cost": {}, "pid": 1,
                   "created_at": 0.0, "started_at": 0.0, "finished_at": None})  # fmt: skip
    store.close()
    return store


def per_call_ms(store: Store, call, hold: bool, n: int = 40) -> float:
    """Median wall milliseconds of one call, with the file held across the calls or not."""
    timings = []
    with store.hold() if hold else _nothing():
        for index in range(n):
            started = time.perf_counter()
            call(index)
            timings.append(1e3 * (time.perf_counter() - started))
    return statistics.median(timings)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def call_costs(path: Path, calls: int = 40) -> dict[str, float]:
    rng = np.random.default_rng(1)
    chunk = {p: rng.random(24) for p in range(16)}
    costs: dict[str, float] = {}
    for label, linger, hold in (("held", LINGER_S, True), ("burst", LINGER_S, False), ("reopen", 0.0, False)):
        store = Store(path, linger=linger)
        read = per_call_ms(store, lambda i, s=store: s.job("j"), hold, calls)
        write = per_call_ms(store, lambda i, s=store, k=label: s.save_scores(f"{k}-{i}", "series", chunk), hold, calls)
        store.close()
        costs[f"{label}_read_ms"], costs[f"{label}_write_ms"] = read, write
        print(f"{label:7s} (linger {linger:g} s, held {hold}): read {read:6.1f} ms, write {write:6.1f} ms")
    return costs


WRITER = textwrap.dedent(
    """
    import sys, time
    from rredcot_viz.store import Store
    store, steps = Store(sys.argv[1]), int(sys.argv[2])
    store.put_run("bench-run", "train", {}, {"steps": steps}, 0)
    print("started", flush=True)
    for step in range(1, steps + 1):
        time.sleep(0.5)
        store.put_train_metrics("bench-run", step, {"reward_mean": step / steps})
    store.finish_run("bench-run", "done", {"steps": steps}, {})
    """
)


def read_and_export(reader: Store, folder: Path) -> tuple[float, int]:
    """Milliseconds of one read of the run plus one export (what the app and a user in a terminal do), and 1 if
    either failed."""
    started = time.perf_counter()
    try:
        reader.train_metrics(["bench-run"])
        reader.export("SELECT * FROM train_metrics", folder / "metrics.csv")
        failed = 0
    except StoreLockedError:
        failed = 1
    return 1e3 * (time.perf_counter() - started), failed


def two_processes(path: Path, folder: Path, steps: int = WRITER_STEPS) -> dict[str, float]:
    reader = Store(path)
    alone = [read_and_export(reader, folder)[0] for _ in range(15)]  # the control: nobody else uses the file
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(steps)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})  # fmt: skip
    assert writer.stdout.readline().strip() == "started"
    waits, failures = [], 0
    while writer.poll() is None:
        wait, failed = read_and_export(reader, folder)
        waits.append(wait)
        failures += failed
        time.sleep(0.2)
    failures += writer.returncode != 0
    logged = len(reader.train_metrics(["bench-run"]))
    print(f"read + export alone: median {statistics.median(alone):.1f} ms")
    print(f"two processes: {len(waits)} reads + exports while the writer logged {logged} of {steps} steps; per pair "
          f"median {statistics.median(waits):.1f} ms, max {max(waits):.1f} ms; failures {failures}")  # fmt: skip
    return {"reader_alone_ms_p50": statistics.median(alone), "reader_wait_ms_p50": statistics.median(waits),
            "reader_wait_ms_max": max(waits), "failures": failures, "steps_logged": logged}  # fmt: skip


def held_control(path: Path) -> int:
    """1 when a reader fails while another process holds the file for good (the old behaviour)."""
    code = f"from rredcot_viz.store import Store; Store({str(path)!r}).collections()"
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "RREDCOT_STORE_WAIT": "1"}
    holder = Store(path)
    with holder.hold():
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    holder.close()
    return int(result.returncode != 0 and "StoreLockedError" in result.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="child processes per start-up figure (their median)")
    parser.add_argument("--steps", type=int, default=WRITER_STEPS, help="steps the writer logs, one each 0.5 s")
    parser.add_argument("--contexts", type=int, default=40, help="contexts of 200 boundary scores in the store")
    parser.add_argument("--calls", type=int, default=40, help="store calls timed per kind (their median)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="rredcot-bench-"))
    figures = startup(folder, args.runs)
    print(f"CPU seconds (median of {args.runs}): " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items()))
    path = folder / "store.duckdb"
    filled_store(path, args.contexts)
    print(f"store: {path.stat().st_size / 1e6:.1f} MB")
    costs = call_costs(path, args.calls)
    shared = two_processes(path, folder, args.steps)
    control = held_control(path)
    print(f"control: a reader while another process holds the file for good fails: {bool(control)}")
    print(
        f"import_cpu_s={figures['import_cpu_s']:.2f} full_parser_cpu_s={figures['full_parser_cpu_s']:.2f} "
        f"torch_import_cpu_s={figures['torch_import_cpu_s']:.2f} python_cpu_s={figures['python_cpu_s']:.2f} "
        f"held_ms={costs['held_read_ms']:.1f} burst_ms={costs['burst_read_ms']:.1f} "
        f"reopen_ms={costs['reopen_read_ms']:.1f} reader_alone_ms_p50={shared['reader_alone_ms_p50']:.1f} "
        f"reader_wait_ms_p50={shared['reader_wait_ms_p50']:.1f} "
        f"reader_wait_ms_max={shared['reader_wait_ms_max']:.1f} failures={shared['failures']} "
        f"held_control_fails={control}"
    )


if __name__ == "__main__":
    main()
