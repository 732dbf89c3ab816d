"""Where things live on disk, resolved in one place.

Environment variables override every default:

- ``RREDCOT_SHARED_DATA``: external datasets (default ``<project>/../shared/data``), read-only.
- ``RREDCOT_CACHE_DIR``: converted model copies and fetched optional models (default ``~/.cache/rredcot_viz``).
- ``RREDCOT_DATA_DIR``: the project's own writable data (DuckDB store, run outputs; default ``<project>/data`` in
  a checkout, ``$XDG_DATA_HOME/rredcot_viz`` (``~/.local/share/rredcot_viz``) for an installed package, whose own
  folder may be read-only and is replaced on upgrade).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
IN_CHECKOUT = (PROJECT_ROOT / "pyproject.toml").exists()  # False when imported from an installed wheel
SAMPLE_TRACES_DIR = Path(__file__).resolve().parent / "sample_traces"  # package data: an installed wheel has them


def shared_data_dir() -> Path:
    return Path(os.environ.get("RREDCOT_SHARED_DATA", PROJECT_ROOT.parent / "shared" / "data"))


def cache_dir() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rredcot_viz"
    return Path(os.environ.get("RREDCOT_CACHE_DIR", default))


def data_dir() -> Path:
    if IN_CHECKOUT:
        default = PROJECT_ROOT / "data"
    else:
        default = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "rredcot_viz"
    return Path(os.environ.get("RREDCOT_DATA_DIR", default))
