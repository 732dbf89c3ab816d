"""A training run in its own process (tests/workflows/test_train_resume.py kills it with SIGKILL mid-run).

Usage: python sigkill_run.py STORE RUN_ID STEPS [resume]"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for tiny.py

from tiny import tiny_lm

from rredcot_viz.store import Store
from rredcot_viz.training import TrainConfig, builtin_split, config_for
from rredcot_viz.workflows.train import resumed_config, run_training


def config(steps: int) -> TrainConfig:
    return config_for(
        "rredcot", steps=steps, max_new_tokens=8, group_size=4, eval_problems=2, eval_samples=1,
        eval_every=2, lora_rank=4, learning_rate=1e-2, checkpoint_every=1, seed=5,
    )  # fmt: skip


def slow(done: int, total: int) -> None:
    time.sleep(0.3)  # room for the test to kill the process between checkpoints


if __name__ == "__main__":
    import rredcot_viz.training.sampler as sampler

    sampler.reward = lambda text, answer: float(len(text) % 2)  # a random model never solves a problem: give variance
    store_path, run_id, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    resume = len(sys.argv) > 4
    chosen = resumed_config(run_id) if resume else config(steps)
    store = Store(store_path)
    run_training(tiny_lm(0), chosen, store, builtin_split(30, 2, seed=0), run_id=run_id, resume=resume, progress=slow)
    store.close()
