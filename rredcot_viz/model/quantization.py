"""8-bit and 4-bit weights with bitsandbytes, on whatever device is at hand (its CPU backend included).

What bitsandbytes can run is probed, not assumed: a tiny layer is quantised and run on the device once per
(device, format), so an install or a CPU it does not support fails with the reason before a model loads.

Two quirks of its CPU backend are handled here. On an AVX512-BF16 CPU it repacks each 4-bit layer's weights
for a fused bf16 inference kernel at that layer's first no-grad forward; that kernel has no backward, so
gradients through a repacked layer are silently dropped (input gradients 2.95 against 816 on a tiny model):
``differentiable`` undoes the repacking and keeps it off before any gradient. And it logs, at import, that it
could not download an optional kernel (offline, always) and, at every 8-bit forward, that it casts
activations to float16: both are dropped by a filter on those two loggers and messages only.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any, Literal

from rredcot_viz.errors import QuantizationUnavailableError

Quantization = Literal["none", "8bit", "4bit"]
QuantType = Literal["nf4", "fp4"]

# Weight bytes per parameter: bitsandbytes quantises the weights of linear layers only; embeddings, norms,
# biases (and a head tied to the embeddings) stay in float32. 4-bit stores two weights a byte plus one absmax
# per 64-weight block, itself 8-bit under double quantisation (1/64 byte a weight).
FLOAT32_BYTES = 4.0
LINEAR_BYTES = {"none": FLOAT32_BYTES, "8bit": 1.0, "4bit": 0.5 + 1 / 64}

_QUIET = {
    "bitsandbytes.backends.cpu.ops": "Failed to load CPU gemm_4bit_forward from kernels-community",
    "bitsandbytes.autograd._functions": "MatMul8bitLt: inputs will be cast from",
}


class _DropMessage(logging.Filter):
    def __init__(self, prefix: str):
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefix)


@lru_cache(maxsize=1)
def quiet_bitsandbytes() -> None:
    """Drop bitsandbytes' offline kernel-download message and its per-forward 8-bit cast message (only those)."""
    for name, prefix in _QUIET.items():
        logging.getLogger(name).addFilter(_DropMessage(prefix))


def label(quantization: str, quant_type: str) -> str:
    """What was loaded, in one word: ``none``, ``8bit``, ``4bit-nf4`` or ``4bit-fp4`` (it enters the fingerprint)."""
    return f"4bit-{quant_type}" if quantization == "4bit" else quantization


def weights_bytes(parameters: int, linear_parameters: int, quantization: str) -> float:
    """Estimated bytes of a model's weights from its parameter counts (not measured: no activations, no runtime)."""
    return linear_parameters * LINEAR_BYTES[quantization] + (parameters - linear_parameters) * FLOAT32_BYTES


def check_support(quantization: Quantization, quant_type: QuantType, device: str) -> None:
    """Raise ``QuantizationUnavailableError`` with the reason when bitsandbytes cannot run this on ``device``."""
    problem = _support_problem(quantization, quant_type, device)
    if problem:
        raise QuantizationUnavailableError(problem)


@lru_cache(maxsize=16)
def _support_problem(quantization: Quantization, quant_type: QuantType, device: str) -> str | None:
    what = label(quantization, quant_type)
    try:
        import bitsandbytes as bnb
    except ImportError as error:
        return (
            f"{what} quantization needs bitsandbytes, which is not installed ({error}); install the pinned "
            "requirements (`scripts/dev setup`, or `pip install -r requirements.txt`)"
        )
    import torch

    kind = torch.device(device).type
    if kind not in bnb.supported_torch_devices:
        return f"bitsandbytes {bnb.__version__} has no backend for the {kind} device"
    try:
        torch.manual_seed(0)
        if quantization == "8bit":
            layer = bnb.nn.Linear8bitLt(64, 64, bias=False, has_fp16_weights=False)
        else:
            layer = bnb.nn.Linear4bit(64, 64, bias=False, compute_dtype=torch.float32, quant_type=quant_type)
        with torch.no_grad():
            out = layer.to(device)(torch.randn(2, 64, device=device))
        if not bool(torch.isfinite(out).all()):
            raise RuntimeError("the probe's output is not finite")
    except Exception as error:  # any failure of the library on this device is the answer
        return f"bitsandbytes {bnb.__version__} cannot run {what} on {device}: {type(error).__name__}: {error}"
    return None


def bitsandbytes_config(quantization: Quantization, quant_type: QuantType, dtype: str) -> Any:
    import torch
    from transformers import BitsAndBytesConfig

    if quantization == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type=quant_type,
        bnb_4bit_compute_dtype=getattr(torch, dtype),
        bnb_4bit_use_double_quant=True,
    )


def differentiable(model: Any) -> None:
    """Let gradients flow through every 4-bit layer of ``model`` (see the module docstring): undo bitsandbytes'
    CPU inference repacking where it happened and keep it off. The layer then runs its unpacked path, slower on
    the CPU, with the absmax scales the repacked kernel used (rounded to bf16)."""
    from bitsandbytes.functional import _convert_weight_packed_for_cpu_inverse
    from bitsandbytes.nn import Linear4bit

    for module in model.modules():
        if not isinstance(module, Linear4bit):
            continue
        module.support_avx512bf16_for_cpu = False
        state = getattr(module.weight, "quant_state", None)
        if state is None or not getattr(state, "packing_format_for_cpu", False):
            continue
        # bitsandbytes 0.50.2's inverse leaves the scales transposed, and re-quantises them when they were
        # double-quantised: keep them as the packed kernel had them, in the unpacked layout.
        scales = state.absmax.T.reshape(-1).float()
        state.original_nested = False
        module.weight.data, _ = _convert_weight_packed_for_cpu_inverse(module.weight.data, state)  # state in place
        state.absmax = scales
