"""A fresh store file per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rredcot_viz.store import Store


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    store = Store(tmp_path / "store.duckdb")
    yield store
    store.close()
