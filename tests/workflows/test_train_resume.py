"""A run killed with SIGKILL mid-run resumes as it was started and ends with the metrics of an uninterrupted
run with the same seed; a resume that asks for other settings is refused with the stored ones."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rredcot_viz.errors import ConfigError
from rredcot_viz.store import Store
from rredcot_viz.workflows.train import checkpoint_root, resumed_config

SCRIPT = Path(__file__).with_name("sigkill_run.py")


def run(store: Path, run_id: str, steps: int, *extra: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(SCRIPT), str(store), run_id, str(steps), *extra], env=env)


def metrics(store: Path, run_id: str) -> list[float]:
    """Every step's reward, loss, gradient norm and held-out accuracy, flattened (NaN where not measured)."""
    db = Store(store)
    frame = db.train_metrics([run_id]).sort_values("step")
    db.close()
    assert frame["step"].tolist() == [0, 1, 2, 3, 4, 5, 6]
    return frame[["reward_mean", "loss", "grad_norm", "held_out_accuracy"]].fillna(-1.0).to_numpy().ravel().tolist()


def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path, monkeypatch):
    env = {**os.environ, "RREDCOT_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    monkeypatch.setenv("RREDCOT_DATA_DIR", env["RREDCOT_DATA_DIR"])
    straight = run(tmp_path / "a.duckdb", "straight", 6, env=env)
    assert straight.wait(timeout=300) == 0

    killed = run(tmp_path / "b.duckdb", "killed", 6, env=env)
    deadline = time.time() + 300
    while not (checkpoint_root("killed") / "step_0003").is_dir() and time.time() < deadline:
        assert killed.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    assert killed.returncode == -signal.SIGKILL
    assert not (checkpoint_root("killed") / "step_0006").exists()

    assert resumed_config("killed").steps == 6  # the started run's count, not the preset's
    resumed = run(tmp_path / "b.duckdb", "killed", 0, "resume", env=env)
    assert resumed.wait(timeout=300) == 0
    expected = metrics(tmp_path / "a.duckdb", "straight")
    assert len(set(expected)) > 4  # the run learns something (a parity reward gives its groups variance)
    assert metrics(tmp_path / "b.duckdb", "killed") == pytest.approx(expected, abs=1e-6)


def test_a_resume_that_changes_the_run_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("RREDCOT_DATA_DIR", str(tmp_path / "data"))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    assert run(tmp_path / "s.duckdb", "short", 2, env=env).wait(timeout=300) == 0
    assert resumed_config("short", {"steps": 4}).steps == 4  # training longer is allowed
    with pytest.raises(ConfigError, match=r"started with method='rredcot' \(asked 'grpo'\)"):
        resumed_config("short", {"method": "grpo", "seed": 5})
