"""bench/quantization.py's summary on made-up runs: the last line's keys, the fidelity figures, and the rule
that picks the 1.5B's CPU default (nf4 only if its sigma agrees with fp32 and it is not slower)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
quantization = importlib.import_module("quantization")

KEYS = [
    "nf4_memory_over_fp32",
    "int8_memory_over_fp32",
    "nf4_time_over_fp32_1p5b",
    "nf4_sigma_spearman_median",
    "nf4_sigma_spearman_worst",
    "int8_sigma_spearman_median",
    "max_logprob_diff_nf4",
    "default_1p5b",
]
FP32_SIGMA = [[0.1, 0.4, -0.2, 0.3], [0.0, 0.2, 0.5, -0.1], [0.3, 0.3, 0.3, 0.3]]  # the last one is constant


def runs_of(model: str, nf4_forward_s: float, nf4_sigma: list[list[float]]) -> list[dict]:
    def traces(sigmas: list[list[float]], shift: float) -> list[dict]:
        return [{"trace": f"t{i}", "prefixes": [0, 3, 6, 9, 12], "sigma": s, "logprobs": [-1.0, -2.0 + shift]}
                for i, s in enumerate(sigmas)]  # fmt: skip

    measured = {"fp32": (1000.0, 10.0, FP32_SIGMA, 0.0), "int8": (400.0, 12.0, FP32_SIGMA, 0.25)}
    measured["nf4"] = (250.0, nf4_forward_s, nf4_sigma, 0.75)
    return [
        {"model": model, "precision": precision, "resident_mb": resident, "forward_s": forward_s,
         **({"traces": traces(sigmas, shift)} if round_ == 0 else {})}
        for round_ in range(2)
        for precision, (resident, forward_s, sigmas, shift) in measured.items()
    ]  # fmt: skip


def test_the_last_line_has_the_issues_keys_and_the_figures():
    swapped = [[-0.2, 0.4, 0.1, 0.3], FP32_SIGMA[1], [0.3, 0.3, 0.2, 0.3]]  # rho 0.8, 1, and fp32's is constant
    runs = runs_of("smollm2-135m", 9.0, FP32_SIGMA) + runs_of("qwen2.5-coder-1.5b", 8.0, swapped)
    line = quantization.summary(runs, rule_spearman=0.95)
    assert list(line) == KEYS
    assert line["nf4_memory_over_fp32"] == "0.250" and line["int8_memory_over_fp32"] == "0.400"  # the 1.5B's
    assert line["nf4_time_over_fp32_1p5b"] == "0.800" and line["max_logprob_diff_nf4"] == "0.750"
    assert line["nf4_sigma_spearman_median"] == "1.000" and line["nf4_sigma_spearman_worst"] == "0.800"  # 4 traces
    assert line["int8_sigma_spearman_median"] == "1.000"
    assert line["default_1p5b"] == "fp32"  # the 1.5B's own median, of 0.8 and 1, is 0.9
    assert quantization.summary(runs, rule_spearman=0.89)["default_1p5b"] == "nf4"


@pytest.mark.parametrize(
    ("nf4_forward_s", "nf4_sigma", "default"),
    [(8.0, FP32_SIGMA, "nf4"), (11.0, FP32_SIGMA, "fp32"), (8.0, [[0.4, 0.1, 0.3, -0.2], *FP32_SIGMA[1:]], "fp32")],
)
def test_the_rule_for_the_1p5b_default(nf4_forward_s, nf4_sigma, default):
    runs = runs_of("qwen2.5-coder-1.5b", nf4_forward_s, nf4_sigma)
    assert quantization.summary(runs, rule_spearman=0.95)["default_1p5b"] == default


def test_without_the_1p5b_there_is_no_default():
    line = quantization.summary(runs_of("smollm2-135m", 9.0, FP32_SIGMA), rule_spearman=0.95)
    assert line["default_1p5b"] == "unmeasured" and line["nf4_time_over_fp32_1p5b"] == "nan"


def test_the_rule_also_needs_the_worst_trace_above_its_bar():
    runs = runs_of("qwen2.5-coder-1.5b", 8.0, [FP32_SIGMA[0], [0.0, 0.5, 0.2, -0.1], FP32_SIGMA[2]])  # rho 1, 0.8
    assert quantization.summary(runs, rule_spearman=0.85, rule_worst=0.8)["default_1p5b"] == "nf4"
    assert quantization.summary(runs, rule_spearman=0.85, rule_worst=0.85)["default_1p5b"] == "fp32"


def test_the_fidelity_list_takes_samples_and_gsm8k_in_turn_and_leaves_out_long_reasoning():
    class T:
        def __init__(self, name: str, cot: str) -> None:
            self.name, self.cot = name, cot

    samples = [T("s0", "a"), T("s1", "b" * 50), T("s2", "c"), T("s3", "d")]
    gsm8k = [T("g0", "e"), T("g1", "f")]
    names = [t.name for t in quantization.fidelity_traces(samples, gsm8k, max_chars=10)]
    assert names == ["s0", "g0", "g1", "s2", "s3"]
