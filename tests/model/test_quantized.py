"""8-bit and 4-bit models through the project's own loader on the CPU (bitsandbytes' CPU backend): what loads,
one analysis, gradients through 4-bit weights after inference, one QLoRA training step, the cache kept apart
from full precision's. The ``gpu`` variants run the same on CUDA (skipped without it: the device machine)."""

from __future__ import annotations

import json
import logging
import shutil

import numpy as np
import pytest
import torch
from tiny import tiny_model, tiny_tokenizer

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators import estimators
from rredcot_viz.model import LanguageModel, ModelConfig
from rredcot_viz.scoring import BoundaryCache
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces import sample_traces
from rredcot_viz.training import Trainer, builtin_split, config_for
from rredcot_viz.training.loss import policy_loss
from rredcot_viz.training.rollouts import TrainRollout

QUANTIZED = [("8bit", "nf4"), ("4bit", "nf4"), ("4bit", "fp4")]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny random model folder, 64 wide: bitsandbytes' 4-bit CPU kernel wants whole 64-weight blocks."""
    folder = tmp_path_factory.mktemp("tiny-quantizable")
    tiny_model(0, hidden=64).save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return folder


def load(model_dir, quantization: str = "none", quant_type: str = "nf4", device: str = "cpu") -> LanguageModel:
    config = ModelConfig(source=str(model_dir), quantization=quantization, quant_type=quant_type, device=device)
    return LanguageModel.load(config)


def analyze(lm: LanguageModel, cache: BoundaryCache | None = None):
    return Analyzer(lm, cache=cache).analyze(
        sample_traces()[0], segmenters.get("hybrid")(k=3), estimators.get("rredcot")()
    )


def test_only_bitsandbytes_offline_and_per_forward_messages_are_dropped(caplog):
    """Its optional kernel download (impossible offline) and the 8-bit cast it logs at every forward."""
    caplog.set_level(logging.INFO)
    ops, functions = (
        logging.getLogger("bitsandbytes.backends.cpu.ops"),
        logging.getLogger("bitsandbytes.autograd._functions"),
    )
    ops.warning("Failed to load CPU gemm_4bit_forward from kernels-community: %s. Please make sure", "no kernels")
    functions.warning("MatMul8bitLt: inputs will be cast from %s to float16 during quantization", "torch.float32")
    ops.warning("Register a kernel")
    logging.getLogger("transformers").warning("Failed to load CPU gemm_4bit_forward from kernels-community")
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("bitsandbytes.backends.cpu.ops", "Register a kernel"),
        ("transformers", "Failed to load CPU gemm_4bit_forward from kernels-community"),
    ]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("quantization", "quant_type"), QUANTIZED)
def test_the_loader_quantizes_and_an_analysis_runs(model_dir, quantization, quant_type, device, caplog):
    import bitsandbytes as bnb

    full, lm = load(model_dir, device=device), load(model_dir, quantization, quant_type, device)
    label = "8bit" if quantization == "8bit" else f"4bit-{quant_type}"
    assert lm.quantization == lm.info()["quantization"] == label and lm.device == device
    layer = lm.model.model.layers[0].mlp.up_proj
    if quantization == "8bit":
        assert isinstance(layer, bnb.nn.Linear8bitLt) and layer.weight.dtype == torch.int8
    else:
        assert isinstance(layer, bnb.nn.Linear4bit) and layer.weight.quant_state.quant_type == quant_type
    assert lm.info()["parameters"] == full.info()["parameters"] == 125_248  # 4-bit: two weights a byte
    # 14 linear weights of 64 x 128 or 64 x 64 per layer in 1 byte (8-bit) or ~0.52 (4-bit) instead of 4
    assert lm.model.get_memory_footprint() < 0.75 * full.model.get_memory_footprint()
    assert lm.extra_info["notes"][-1].startswith(f"loaded {model_dir.name} in {label} with bitsandbytes 0.50.2")
    assert len({lm.fingerprint, full.fingerprint}) == 2

    caplog.set_level(logging.INFO)
    quantized, reference = analyze(lm), analyze(full)
    assert not [r for r in caplog.records if r.name.startswith("bitsandbytes")]
    assert quantized.model_calls >= 1 and quantized.k == reference.k == 3
    values, full_values = quantized.values.values, reference.values.values
    assert values[-1] == full_values[-1] == 1.0  # the outcome
    # Other weights, about the same answer probabilities (~1e-3 on this random model; 8-bit within 2%, 4-bit 16%)
    assert not np.array_equal(values, full_values)
    np.testing.assert_allclose(values[:-1], full_values[:-1], rtol=0.25)


def test_quantized_and_full_precision_scores_never_share_a_cache_entry(model_dir, tmp_path):
    """One store, one trace: the 4-bit analysis finds nothing of full precision's and computes its own, and the
    store says which quantization each context was scored with."""
    from rredcot_viz.store import Store

    store = Store(tmp_path / "store.duckdb")
    first = analyze(load(model_dir), BoundaryCache(backend=store))
    quantized = analyze(load(model_dir, "4bit"), BoundaryCache(backend=store))
    again = analyze(load(model_dir, "4bit"), BoundaryCache(backend=store))
    assert first.model_calls >= 1 and quantized.model_calls == first.model_calls and again.model_calls == 0
    np.testing.assert_array_equal(again.values.values, quantized.values.values)
    contexts = store.contexts(sample_traces()[0].content_hash)
    assert [c["quantization"] for c in contexts] == ["none", "4bit-nf4"]
    assert len({c["context_key"] for c in contexts}) == len({c["model_fingerprint"] for c in contexts}) == 2


def test_a_converted_model_is_quantised_once_and_read_back_from_the_cache(model_dir, tmp_path, monkeypatch):
    """bitsandbytes quantises at about 5 M weights a second on this CPU: a converted GGUF's quantised weights are
    saved once, and later loads read them with the same logits."""
    from rredcot_viz.model import loading

    monkeypatch.setenv("RREDCOT_CACHE_DIR", str(tmp_path))
    converted = shutil.copytree(model_dir, tmp_path / "converted")
    (converted / "rredcot_source.json").write_text('{"gguf_sha256": "0123abcd"}')  # as convert_gguf leaves it
    source = loading.ResolvedSource("gguf", "tiny.gguf", str(converted), "tiny.gguf")
    monkeypatch.setattr(loading, "resolve_source", lambda config: source)
    monkeypatch.setattr(loading, "convert_gguf", lambda source, note=None: converted)
    first, again = load(converted, "4bit"), load(converted, "4bit")
    saved = loading.quantized_dir_for(first.fingerprint)
    assert first.extra_info["notes"][0] == f"quantised the weights once into {saved} (later loads read them)"
    assert not again.extra_info["notes"][0].startswith("quantised") and again.fingerprint == first.fingerprint
    assert json.loads((saved / "config.json").read_text())["quantization_config"]["bnb_4bit_quant_type"] == "nf4"
    ids = first.encode("Tom has 3 apples and buys 5 more")
    np.testing.assert_array_equal(again.token_stats(ids, 1).logprobs, first.token_stats(ids, 1).logprobs)


def test_the_fingerprint_names_the_4bit_format(model_dir):
    fingerprints = {(q, t): load(model_dir, q, t).fingerprint for q, t in [("none", "nf4"), *QUANTIZED]}
    assert len(set(fingerprints.values())) == 4
    assert load(model_dir, "none", "fp4").fingerprint == fingerprints["none", "nf4"]  # fp4 only matters in 4-bit


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_flow_through_4bit_weights_after_inference(model_dir, device):
    """On an AVX512-BF16 CPU bitsandbytes repacks 4-bit weights at the first no-grad forward into a kernel with
    no backward. A gradient after inference equals one taken before any (the repacking undone, its bf16 scales
    kept), and inference after a gradient no longer repacks."""
    fresh, used = load(model_dir, "4bit", device=device), load(model_dir, "4bit", device=device)
    ids = fresh.encode("Tom has 3 apples and buys 5 more")

    def gradient(lm: LanguageModel) -> torch.Tensor:
        embeddings = lm.input_embeddings(ids).requires_grad_(True)
        lm.target_logprob_from_embeddings(embeddings[None], ids[-2:]).sum().backward()
        return embeddings.grad

    used.token_stats(ids, 1)  # inference first, as the Inspect page before a gradient attribution
    reference = gradient(fresh)
    assert reference.abs().sum() > 1.0
    torch.testing.assert_close(gradient(used), reference, rtol=0.05, atol=0.05 * float(reference.abs().max()))
    fresh.token_stats(ids, 1)
    torch.testing.assert_close(gradient(fresh), reference, rtol=0, atol=0)


@pytest.fixture
def trainer_on(model_dir):
    train, held = builtin_split(30, 4, seed=0)

    def make(lm: LanguageModel, **overrides) -> Trainer:
        settings = dict(steps=1, prompts_per_step=2, max_new_tokens=8, group_size=2, eval_every=0, lora_rank=4)
        config = config_for("grpo", **{**settings, "learning_rate": 1e-2, **overrides})
        return Trainer(lm, config, train, held, run_id="test-quantized")

    return make


def _lora_gradients(trainer: Trainer, rollouts: list[TrainRollout]) -> list[torch.Tensor]:
    trainer.model.zero_grad(set_to_none=True)
    logprobs, mask, _ = trainer.learner.logprobs(rollouts)
    advantages = torch.tensor([[1.0] * logprobs.shape[1], [-1.0] * logprobs.shape[1]], device=logprobs.device)
    policy_loss(logprobs, logprobs.detach(), advantages, mask)[0].backward()
    return [p.grad.clone() for p in trainer.learner.trainable]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("quantization", ["8bit", "4bit"])
def test_one_lora_step_on_a_quantized_base(model_dir, trainer_on, quantization, device, monkeypatch):
    """LoRA on frozen 8-bit / 4-bit weights (QLoRA): a training step moves the adapters only, and the rollouts
    the policy sampled first (no-grad inference) do not change the gradients it trains with."""
    monkeypatch.setattr("rredcot_viz.training.sampler.reward", lambda text, answer: float(len(text) % 2))
    base = load(model_dir, quantization, device=device)
    trainer = trainer_on(base)
    prompt = trainer.sampler.prompt_ids(trainer.train_problems[0])
    rollouts = [TrainRollout(prompt, [40, 41, 42, 43], "a", 1.0, 0), TrainRollout(prompt, [50, 51, 52], "b", 0.0, 0)]
    before_sampling = _lora_gradients(trainer, rollouts)
    frozen = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if not p.requires_grad}
    adapters = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}

    metrics, _ = trainer.train_step()  # samples with the policy, credits, updates
    assert metrics["rollouts"] == 4 and np.isfinite(metrics["loss"]) and metrics["grad_norm"] > 0
    after = dict(trainer.model.named_parameters())
    assert frozen and all(torch.equal(after[n], p) for n, p in frozen.items())  # the quantised base untouched
    assert all(not torch.equal(after[n], p) for n, p in adapters.items() if ".lora_B." in n)

    trainer.learner.load_state(trainer_on(base).learner.state())  # back to the adapters it started with
    tolerance = {"rtol": 1e-4, "atol": 1e-6} if device == "cpu" else {"rtol": 0.05, "atol": 1e-3}  # CUDA: bf16
    for got, want in zip(_lora_gradients(trainer, rollouts), before_sampling, strict=True):
        torch.testing.assert_close(got, want, **tolerance)


def test_full_finetuning_a_quantized_base_is_refused(model_dir, trainer_on):
    with pytest.raises(ConfigError, match="4bit-nf4 model's weights are frozen integers: train LoRA adapters"):
        trainer_on(load(model_dir, "4bit"), full_finetune=True)
