"""Fixtures of the benches' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.smoke import save_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random model as a folder: a bench's ``--model`` runs its main path on it in seconds."""
    return save_tiny_model(tmp_path_factory.mktemp("tiny-model"))
