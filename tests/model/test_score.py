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


def test_branches_share_the_stem_and_equal_naive_re_encoding(tiny):
    """Three tails after one stem: each branch's requests (cuts inside its tail and inside the stem) equal naive
    re-encoding, its stats equal ``token_stats`` of stem + tail, and the stem is run once."""
    stem = tiny.encode_prompt(tiny.format_prompt("What is 12 * 4 - 6?"))
    tails = [tiny.encode(TEXT), tiny.encode("So the total is 42."), tiny.encode(TEXT[:30])]
    target = tuple(tiny.encode(" 42}"))
    context = tuple(tiny.encode("\nThe answer is \\boxed{"))

    def plan(branch, stats):
        assert stats is not None and len(stats.entropies) == len(tails[branch])
        length = len(stem) + len(tails[branch])
        return [Continuation(cut, context, target) for cut in (len(stem) - 2, len(stem), len(stem) + 3, length)]

    seen = []
    old = tiny.pack_tokens
    tiny.pack_tokens = 40  # several chunks per branch
    try:
        scores = tiny.score_branches(stem, tails, plan, with_stats=True, progress=lambda d, t: seen.append((d, t)))
    finally:
        tiny.pack_tokens = old
    for branch, tail in enumerate(tails):
        ids = stem + tail
        naive = tiny.score_continuations_naive(ids, plan(branch, scores.stats[branch]))
        for got, want in zip(scores.logprobs[branch], naive.logprobs, strict=True):
            np.testing.assert_allclose(got, want, atol=1e-5)
        whole = tiny.token_stats(ids, len(stem))
        np.testing.assert_allclose(scores.stats[branch].entropies, whole.entropies, atol=1e-5)
        np.testing.assert_allclose(scores.stats[branch].logprobs, whole.logprobs, atol=1e-5)
    block = len(context) + len(target)  # the repeated prefix token in, the last target token (never read) out
    stem_requests = 2  # the two cuts inside the stem are the same for every branch: scored once
    expected = (len(stem) - 1) + sum(1 + len(t) for t in tails) + (2 * len(tails) + stem_requests) * block
    assert scores.cost.calls == 1 and scores.cost.tokens_processed == expected
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    # without stats a tail runs only as far as its largest cut needs: here its last token is never run
    plain = tiny.score_branches(stem, tails, lambda branch, stats: plan(branch, scores.stats[branch]))
    assert plain.cost.tokens_processed == expected - len(tails)
    for got, want in zip(plain.logprobs, scores.logprobs, strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-5)


def test_a_progress_callback_that_raises_stops_the_branches(tiny):
    stem = tiny.encode_prompt(tiny.format_prompt("q"))
    planned = []

    def plan(branch, stats):
        planned.append(branch)
        return [Continuation(len(stem) + 2, (), (5,))]

    def cancel(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tiny.score_branches(stem, [tiny.encode(TEXT)] * 3, plan, progress=cancel)
    assert planned == [0]
