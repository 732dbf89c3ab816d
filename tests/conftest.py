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
