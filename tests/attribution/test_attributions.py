"""LOO and Shapley exact on a toy model; gradient, IG and attention on tiny random transformers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from toy import ToyLanguageModel

from rredcot_viz.attribution import attributions
from rredcot_viz.attribution.shapley import exact_shapley
from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import MissingReferenceError
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

# METHOD.md §7.2 fixture: f(empty)=0, f({1})=0.2, f({2})=0.5, f({1,2})=1.0 (shifted by a constant log-prob)
F = {(): 0.0, (0,): 0.2, (1,): 0.5, (0, 1): 1.0}
SEGMENT_TEXT = ["aa\n", "bb\n", "cc\n", "dd\n", "ee\n", "ff\n", "gg\n", "hh\n", "ii\n", "jj\n"]


def make(k: int, f):
    """A toy whose p(answer "7" | context) = exp(f(segments present) - 3); "}" then has probability 0.5."""

    def rule(context: str) -> dict[str, float]:
        if not context.endswith("="):
            return {"}": 0.5} if context.endswith("=7") else {}
        present = tuple(i for i, text in enumerate(SEGMENT_TEXT[:k]) if text in context)
        return {"7": math.exp(f(present) - 3.0)}

    trace = Trace("Q?", "".join(SEGMENT_TEXT[:k]) + "The answer is \\boxed{7}.", reference_answer="7")
    analyzer = Analyzer(ToyLanguageModel(rule))
    return analyzer.context(trace), analyzer.segment(trace, segmenters.get("line")())


def test_shapley_and_loo_fixture():
    context, segmentation = make(2, F.__getitem__)
    shapley = attributions.get("shapley")(trigger="=").attribute(context, segmentation)
    np.testing.assert_allclose(shapley.values, [0.35, 0.65], atol=1e-9)
    assert abs(shapley.checks["efficiency_gap"]) < 1e-9
    loo = attributions.get("loo")(trigger="=").attribute(context, segmentation)
    np.testing.assert_allclose(loo.values, [0.5, 0.8], atol=1e-9)  # not efficient: sums to 1.3


def random_game(k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    weights, pair = rng.normal(size=k), rng.normal(size=(k, k)) * 0.3
    return lambda s: float(sum(weights[i] for i in s) + sum(pair[i, j] for i in s for j in s if i < j)) * 0.2


def test_exact_shapley_on_a_random_game():
    k = 5
    game = random_game(k)
    context, segmentation = make(k, game)
    result = attributions.get("shapley")(trigger="=").attribute(context, segmentation)
    import itertools

    table = {tuple(s): game(tuple(s)) for r in range(k + 1) for s in itertools.combinations(range(k), r)}
    np.testing.assert_allclose(result.values, exact_shapley(table, k), atol=1e-9)
    assert abs(result.values.sum() - (game(tuple(range(k))) - game(()))) < 1e-9


def test_sampled_shapley_is_efficient_for_any_m_and_converges():
    k = 10
    game = random_game(k, seed=1)
    context, segmentation = make(k, game)
    exact = attributions.get("shapley")(trigger="=", exact_max_k=10).attribute(context, segmentation)
    for m in (1, 3):
        sampled = attributions.get("shapley")(trigger="=", exact_max_k=8, permutations=m).attribute(
            context, segmentation
        )
        assert abs(sampled.checks["efficiency_gap"]) < 1e-6 * (1 + abs(exact.values.sum()))
    many = attributions.get("shapley")(trigger="=", exact_max_k=8, permutations=300, seed=2).attribute(
        context, segmentation
    )
    np.testing.assert_allclose(many.values, exact.values, atol=4 * many.stderr.max() + 1e-3)
    assert (many.stderr > 0).all()


def test_subsets_reuse_the_trace_prefix():
    """LOO's f(N without t) reuses the trace up to segment t: only the later segments are re-encoded."""
    context, segmentation = make(4, lambda s: 0.1 * len(s))
    lm = context.lm
    attributions.get("loo")(trigger="=").attribute(context, segmentation)
    processed = lm.meter.history[-1][1].tokens_processed
    blocks = [1 + 3 * (4 - 1 - t) + 1 + 2 for t in range(4)] + [1 + 1 + 2]  # repeated token, later segments, "=", "7}"
    assert processed == len(context.ids) + sum(blocks)


def test_missing_target_is_named(tiny):
    trace = Trace("Q?", "a\nb\nThe answer is 3.")
    context = Analyzer(tiny).context(trace)
    segmentation = Analyzer(tiny).segment(trace, segmenters.get("line")())
    with pytest.raises(MissingReferenceError, match="reference answer.*use target=own"):
        attributions.get("loo")().attribute(context, segmentation)
    own = attributions.get("loo")(target="own").attribute(context, segmentation)
    assert own.values.shape == (segmentation.k,)


TRACE = Trace(
    "Tom has 3 apples and buys 5 more?",
    "Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nWait, let me check again.\nThe answer is \\boxed{8}.",
    reference_answer="8",
)


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


def test_attention_mass_is_a_share_of_the_query_attention(tiny):
    analyzer = Analyzer(tiny)
    context, segmentation = analyzer.context(TRACE), analyzer.segment(TRACE, segmenters.get("line")())
    result = attributions.get("attention")().attribute(context, segmentation)
    assert result.values.shape == (segmentation.k,) and (result.values > 0).all() and result.values.sum() < 1.0
    assert tiny.model.config._attn_implementation == "sdpa"  # restored after the eager pass
