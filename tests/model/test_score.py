"""Scoring (model/score.py) on tiny random models: token stats against one full forward, chunked prefill,
stats and continuations in one call, and the context-length error."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rredcot_viz.errors import ContextLengthError
from rredcot_viz.model.packing import Continuation

from .forward import TEXT, full_logprobs


def test_token_stats_match_one_full_forward(tiny):
    prompt = tiny.encode_prompt(tiny.format_prompt("What is 12 * 4 - 6?"))
    ids = prompt + tiny.encode(TEXT)
    stats = tiny.token_stats(ids, start=len(prompt))
    full = full_logprobs(tiny, ids)
    targets = torch.tensor(ids[len(prompt) :])
    want_lp = full[len(prompt) - 1 : -1].gather(-1, targets[:, None])[:, 0].numpy()
    want_h = -(full.exp() * full).sum(-1)[len(prompt) - 1 : -1].numpy()
    assert stats.logprobs.shape == (len(ids) - len(prompt),)
    np.testing.assert_allclose(stats.logprobs, want_lp, atol=1e-5)
    np.testing.assert_allclose(stats.entropies, want_h, atol=1e-5)
    assert (stats.entropies > 0).all() and (stats.entropies <= np.log(len(tiny.tokenizer)) + 1e-6).all()


def test_chunked_prefill_equals_single_pass(tiny):
    ids = tiny.encode_prompt(tiny.format_prompt("q")) + tiny.encode(TEXT * 3)
    whole = tiny.token_stats(ids, start=5)
    old = tiny.prefill_chunk
    tiny.prefill_chunk = 7
    try:
        chunked = tiny.token_stats(ids, start=5)
    finally:
        tiny.prefill_chunk = old
    np.testing.assert_allclose(chunked.logprobs, whole.logprobs, atol=1e-5)
    np.testing.assert_allclose(chunked.entropies, whole.entropies, atol=1e-5)


def test_stats_and_continuations_in_one_call(tiny):
    ids = tiny.encode_prompt(tiny.format_prompt("q")) + tiny.encode(TEXT)
    requests = [Continuation(cut, (), tuple(tiny.encode(" 42"))) for cut in (10, 20, len(ids))]
    both = tiny.score_continuations(ids, requests, stats_start=3)
    np.testing.assert_allclose(both.stats.logprobs, tiny.token_stats(ids, 3).logprobs, atol=1e-6)
    assert both.cost.calls == 1 and both.cost.tokens_processed == len(ids) + sum(r.block_length for r in requests)


def test_context_length_error_names_both_numbers(tiny):
    limit = tiny.context_length
    with pytest.raises(ContextLengthError, match=f"is {limit + 5} tokens but the model's context is {limit} tokens"):
        tiny.token_stats([5] * (limit + 5), start=1)
    with pytest.raises(ContextLengthError):
        tiny.score_continuations([5] * 10, [Continuation(10, (), (1,) * limit)])
