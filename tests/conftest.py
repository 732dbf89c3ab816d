"""Shared fixtures: tiny random models (fast, exact) and the embedded model (integration)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/tiny.py and friends
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RREDCOT_DATA_DIR", tempfile.mkdtemp(prefix="rredcot-data-"))  # checkpoints, never data/


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The real engine's tests run only when asked for (``-m engine``): its first start installs and starts vLLM.
    The ``gpu`` tests run only where CUDA is (the device machine: ``pytest -m gpu``)."""
    import torch

    skips = {}
    if not torch.cuda.is_available():
        skips["gpu"] = pytest.mark.skip(reason="needs a CUDA GPU")
    if "engine" not in (config.getoption("markexpr") or ""):
        skips["engine"] = pytest.mark.skip(reason="needs the vLLM engine: run `pytest -m engine` (it starts it)")
    for item in items:
        for marker, skip in skips.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def tiny():
    from tiny import tiny_lm

    return tiny_lm(seed=0)


@pytest.fixture(scope="module")
def policy():
    """Another tiny random model, one per test module (the credit and generation tests)."""
    from tiny import tiny_lm

    return tiny_lm(3)


@pytest.fixture(scope="session")
def embedded_lm():
    """The embedded SmolLM2-135M-Instruct, loaded once per test session (about a second once converted)."""
    from rredcot_viz.model.lm import LanguageModel

    return LanguageModel.load()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    from rredcot_viz.paths import shared_data_dir

    return shared_data_dir()


def require_file(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"shared data file {path} is absent")
    return path


# ---------------------------------------------------------------------------------- per-file durations
FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    """Add every phase's time (setup, call, teardown) to its test file's total."""
    path = report.nodeid.split("::", 1)[0]
    FILE_SECONDS[path] = FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """The slowest test files, so a slow run says where its time went (``--durations`` lists single tests)."""
    if not FILE_SECONDS:
        return
    slowest = sorted(FILE_SECONDS.items(), key=lambda item: -item[1])[:15]
    terminalreporter.section("slowest test files")
    for path, seconds in slowest:
        terminalreporter.write_line(f"{seconds:8.1f} s  {path}")
    terminalreporter.write_line(f"{sum(FILE_SECONDS.values()):8.1f} s  in all ({len(FILE_SECONDS)} files)")


# ---------------------------------------------------------------------------------- a clean exit
EXIT_STATUS: list[int] = [0]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    EXIT_STATUS[0] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave with pytest's own status once the report is written, without the interpreter's teardown: after a
    suite that ran torch, DuckDB and browser threads, C++ static destructors sometimes abort there ("terminate
    called without an active exception", rc 134) although every test passed (a known PyTorch teardown class).
    The store's files are closed first, as at a normal exit."""
    from rredcot_viz.store.base import close_open_stores

    close_open_stores()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_STATUS[0])
