"""The packed continuation scorer must equal naive re-encoding (to 1e-4 in log-prob)."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rredcot_viz.model.packing import Continuation, build_chunk, plan_chunks

TRACE = "Tom starts with 3 apples. He buys 5 more, so 3 + 5 = 8.\nWait, let me check: 8 - 5 = 3. So the total is 8."


def _sequence(lm) -> list[int]:
    return lm.encode_prompt(lm.format_prompt("Tom has 3 apples and buys 5 more. How many?")) + lm.encode(TRACE)


def test_packed_equals_naive_on_every_cut(tiny):
    ids = _sequence(tiny)
    trigger = tuple(tiny.encode("\nTherefore, the final answer is \\boxed{"))
    answer = tuple(tiny.encode("8}"))
    requests = [Continuation(cut, trigger, answer) for cut in range(1, len(ids) + 1)]
    packed = tiny.score_continuations(ids, requests)
    naive = tiny.score_continuations_naive(ids, requests)
    assert len(packed.logprobs) == len(requests)
    for got, want in zip(packed.logprobs, naive.logprobs, strict=True):
        assert got.shape == (len(answer),)
        np.testing.assert_allclose(got, want, atol=1e-4)
    # reuse: the sequence once plus one block per cut (the repeated token, the trigger and the answer but its last
    # token, which is predicted and never read), versus every prefix again
    assert packed.cost.tokens_processed == len(ids) + len(requests) * (len(trigger) + len(answer))
    assert naive.cost.tokens_processed == sum(range(1, len(ids) + 1)) + len(requests) * (len(trigger) + len(answer))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.lists(
        st.tuples(
            st.integers(1, 60),
            st.lists(st.integers(3, 300), max_size=4),
            st.lists(st.integers(3, 300), min_size=1, max_size=6),
        ),
        min_size=1,
        max_size=8,
    ),
    pack=st.integers(4, 64),
)
def test_packed_equals_naive_property(tiny, data, pack):
    ids = _sequence(tiny)[:60]
    requests = [Continuation(min(cut, len(ids)), tuple(ctx), tuple(tgt)) for cut, ctx, tgt in data]
    old = tiny.pack_tokens
    tiny.pack_tokens = pack
    try:
        packed = tiny.score_continuations(ids, requests)
    finally:
        tiny.pack_tokens = old
    naive = tiny.score_continuations_naive(ids, requests)
    for got, want in zip(packed.logprobs, naive.logprobs, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-4)


def test_plan_chunks_respects_budget_and_order():
    requests = [Continuation(5, (1, 2), (3, 4)) for _ in range(5)]  # block length 4 each
    assert plan_chunks(requests, 8) == [[0, 1], [2, 3], [4]]  # equal cuts keep their order
    assert plan_chunks(requests, 3) == [[0], [1], [2], [3], [4]]  # oversize blocks get their own chunk


def test_build_chunk_mask_layout():
    ids = [10, 11, 12, 13, 14]
    requests = [Continuation(3, (7,), (8, 9)), Continuation(1, (), (6,))]
    chunk = build_chunk(ids, requests, [0, 1], past_length=len(ids), dtype=torch.float32)
    # block 0 = [ids[2], 7, 8] at positions 2..4 (its last target token, 9, is predicted, never read);
    # block 1 = [ids[0]] at position 0
    assert chunk.input_ids.tolist() == [[12, 7, 8, 10]]
    assert chunk.position_ids.tolist() == [[2, 3, 4, 0]]
    allowed = (chunk.attention_mask[0, 0] == 0).int().tolist()
    assert allowed[0] == [1, 1, 0, 0, 0, 1, 0, 0, 0]  # past < cut-1 = 2, then itself
    assert allowed[2] == [1, 1, 0, 0, 0, 1, 1, 1, 0]
    assert allowed[3] == [0, 0, 0, 0, 0, 0, 0, 0, 1]  # cut 1: no past at all
    # logits kept at the positions that predict the targets: 7 -> predicts 8, 8 -> 9; ids[0] -> 6
    assert chunk.keep.tolist() == [1, 2, 3]
    assert chunk.target_ids.tolist() == [8, 9, 6]
    assert chunk.target_slices == [slice(0, 2), slice(2, 3)]


def test_plan_chunks_takes_longest_prefixes_first():
    requests = [Continuation(cut, (), (1, 2, 3)) for cut in (3, 9, 5, 9)]  # block length 3 each
    assert plan_chunks(requests, 6) == [[1, 3], [2, 0]]
