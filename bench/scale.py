"""Batch analysis with 1 and 2 processes on the CPU (embedded model): wall time, speedup, same results?

Runs ``analyze-dataset`` on the first ``--traces`` GSM8K model solutions (references included) once as one
process using every core, once as two processes of one thread each (torchrun; ``accelerate launch`` takes
their place on GPUs), then compares the merged records. Last line:
``traces=<n> one_proc_s=<x> two_proc_s=<y> speedup=<z> identical=<true|false>``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from rredcot_viz.paths import PROJECT_ROOT, shared_data_dir
from rredcot_viz.workflows.batch import MERGED


def run(command: list[str], threads: int) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(PROJECT_ROOT)}
    started = time.perf_counter()
    finished = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if finished.returncode:
        sys.exit(f"failed: {' '.join(command)}\n{finished.stderr[-3000:]}")
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=40)
    parser.add_argument("--data", default=str(shared_data_dir() / "gsm8k" / "example_model_solutions.jsonl"))
    parser.add_argument("--model", help="catalogue key, model folder or GGUF file (default: the embedded model)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rredcot-scale-"))
    analyse = ["-m", "rredcot_viz", "analyze-dataset", args.data, "--limit", str(args.traces), "--no-store"]
    analyse += ["--model", args.model] if args.model else []
    one = run([sys.executable, *analyse, "--out", str(work / "one")], threads=os.cpu_count() or 2)
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    two = run([*launcher, *analyse, "--out", str(work / "two")], threads=1)
    a, b = pd.read_parquet(work / "one" / MERGED), pd.read_parquet(work / "two" / MERGED)
    same_rows = a["trace_hash"].tolist() == b["trace_hash"].tolist() and (a["k"] == b["k"]).all()
    gaps = [np.abs(np.asarray(x) - np.asarray(y)).max() for x, y in zip(a["sigma"], b["sigma"], strict=True) if len(x)]
    largest = float(max(gaps)) if gaps else 0.0
    identical = bool(same_rows and largest < 1e-5)
    for path in sorted((work / "two").glob("throughput-r*.json")):
        print("two processes:", json.loads(path.read_text()))
    print("one process:", json.loads(next((work / "one").glob("throughput-r*.json")).read_text()))
    print(f"{len(a)} traces; largest sigma difference between the runs {largest:.2e}; outputs in {work}")
    print(
        f"traces={len(a)} one_proc_s={one:.1f} two_proc_s={two:.1f} speedup={one / two:.2f} "
        f"identical={str(identical).lower()}"
    )


if __name__ == "__main__":
    main()
