"""``train`` in a terminal shares the store: while it runs, another process exports from the store and reads the
run as the app does; SIGTERM stops it like Ctrl-C (recorded as stopped, with finished_at); the run id is printed
before the first step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from rredcot_viz.cli import main
from rredcot_viz.store import Store


def test_train_shares_the_store_and_sigterm_records_a_stop(tmp_path, tiny_model_dir, capsys):
    store_path = tmp_path / "store.duckdb"
    env = {**os.environ, "RREDCOT_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "rredcot_viz", "--store", str(store_path), "train", "--model", str(tiny_model_dir)]
    command += ["--steps", "1000", "--group-size", "2", "--max-new-tokens", "4", "--eval-every", "0"]
    command += ["--checkpoint-every", "0", "--lora-rank", "2"]
    train = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = train.stdout.readline()
        assert first.startswith("run train-grpo-s0-"), first  # before any step: a crash leaves the id on screen
        run_id = first.split()[1].rstrip(":")
        assert "Resume with `train --resume " in first
        app = Store(store_path)  # what the app does: read the run while the CLI trains
        deadline = time.time() + 300
        while time.time() < deadline:
            steps = app.train_metrics([run_id])
            if len(steps) >= 2:
                break
            assert train.poll() is None, "train ended early"
            time.sleep(0.5)
        assert len(steps) >= 2 and train.poll() is None
        runs = app.training_runs()
        assert runs.set_index("run_id").loc[run_id, "status"] == "running"
        out = tmp_path / "runs.csv"
        export = ["--store", str(store_path), "export", "SELECT run_id, status FROM runs", str(out)]
        assert main(export) == 0  # another process's export, while train still runs
        assert out.read_text().splitlines() == ["run_id,status", f"{run_id},running"]
        assert train.poll() is None
        app.close()

        train.send_signal(signal.SIGTERM)
        assert train.wait(timeout=120) == 143
        store = Store(store_path)
        run = store.run(run_id)
        assert run["status"] == "stopped" and run["finished_at"] is not None
        # the finished steps are kept, as the app's Stop keeps them (no checkpoint was due: --checkpoint-every 0)
        (saved,) = (tmp_path / "data" / "checkpoints" / run_id).glob("step_*")
        logged = int(store.train_metrics([run_id])["step"].max())
        assert json.loads((saved / "trainer.json").read_text())["step"] in (logged, logged + 1)
    finally:
        if train.poll() is None:
            train.kill()
            train.wait()
