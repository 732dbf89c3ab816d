"""Gradient x input and integrated gradients (attribution/gradient.py) on a smooth tiny random transformer."""

from __future__ import annotations

import pytest
import torch

from rredcot_viz.attribution import attributions
from rredcot_viz.engine import Analyzer
from rredcot_viz.segmenters import segmenters

from .cases import TRACE


@pytest.fixture(scope="module")
def smooth():
    """A tiny model with transformers' default initialisation: smooth enough for path integrals."""
    from tiny import tiny_tokenizer

    from rredcot_viz.model.lm import LanguageModel

    torch.manual_seed(0)
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    return LanguageModel(LlamaForCausalLM(config).eval(), tokenizer, name="smooth", fingerprint="smooth")


def test_grad_x_input_matches_a_finite_difference(smooth):
    analyzer = Analyzer(smooth)
    context, segmentation = analyzer.context(TRACE), analyzer.segment(TRACE, segmenters.get("line")())
    method = attributions.get("grad_x_input")()
    result = method.attribute(context, segmentation)
    from rredcot_viz.attribution.gradient import _sequence

    ids, variable, target = _sequence(method, context, segmentation)
    base = smooth.input_embeddings(ids)
    for index, segment in enumerate(segmentation.segments):
        direction = torch.zeros_like(base)
        a, b = variable.start + segment.token_span[0], variable.start + segment.token_span[1]
        direction[a:b] = base[a:b]
        eps = 1e-3
        with torch.no_grad():
            up = smooth.target_logprob_from_embeddings((base + eps * direction)[None], target)
            down = smooth.target_logprob_from_embeddings((base - eps * direction)[None], target)
        assert result.values[index] == pytest.approx(float(up - down) / (2 * eps), abs=2e-3)


def test_integrated_gradients_completeness_improves_with_steps(smooth):
    analyzer = Analyzer(smooth)
    context, segmentation = analyzer.context(TRACE), analyzer.segment(TRACE, segmenters.get("line")())
    errors = {}
    for steps in (2, 16, 256):
        result = attributions.get("integrated_gradients")(steps=steps, batch=64).attribute(context, segmentation)
        errors[steps] = result.checks["completeness_relative"]
    assert errors[256] < errors[16] < errors[2] and errors[256] < 0.05  # error ~ 1/steps (right Riemann sum)
    assert result.notes == []
    coarse = attributions.get("integrated_gradients")(steps=1).attribute(context, segmentation)
    assert coarse.checks["completeness_relative"] > 0.05 and "use more steps" in coarse.notes[0]
