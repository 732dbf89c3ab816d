"""LanguageModel on tiny random models: stats, offsets, prompts, sampling, costs and error messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rredcot_viz.errors import ContextLengthError, ModelOutOfMemoryError
from rredcot_viz.model.core import RAW_PROMPT_TEMPLATE
from rredcot_viz.model.packing import Continuation
from rredcot_viz.model.sampling import SamplingConfig, select_tokens

TEXT = "So the total is 12 * 4 = 48.\nNext, we subtract 6 to get 42. Wait, let me check again."


def _full_logprobs(lm, ids):
    with torch.no_grad():
        return torch.log_softmax(lm.model(torch.tensor([ids])).logits[0].float(), dim=-1)


def test_token_stats_match_one_full_forward(tiny):
    prompt = tiny.encode_prompt(tiny.format_prompt("What is 12 * 4 - 6?"))
    ids = prompt + tiny.encode(TEXT)
    stats = tiny.token_stats(ids, start=len(prompt))
    full = _full_logprobs(tiny, ids)
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


def test_offsets_tile_the_text(tiny):
    text = "Hmm,  ünïcode ✓ and\n\nnew lines: 3.5 * 2 = 7"
    encoding = tiny.encode_with_offsets(text)
    assert encoding.starts[0] == 0
    assert encoding.starts == sorted(encoding.starts)
    assert len(encoding.ids) == len(encoding.starts)
    assert tiny.tokenizer.decode(encoding.ids) == text  # byte-level BPE is lossless


def test_prompt_formats(tiny):
    chat = tiny.format_prompt("Add 2 and 3.", system="Be brief.")
    assert chat.startswith("<|im_start|>system\nBe brief.<|im_end|>") and chat.endswith("<|im_start|>assistant\n")
    ids = tiny.encode_prompt(chat)
    assert ids[0] == tiny.tokenizer.convert_tokens_to_ids("<|im_start|>")  # markers parsed as special tokens
    assert tiny.format_prompt("Add 2 and 3.", chat=False) == RAW_PROMPT_TEMPLATE.format(question="Add 2 and 3.")


def test_sampling_is_reproducible_per_row(tiny):
    prompt = tiny.encode_prompt(tiny.format_prompt("Count to five."))
    config = SamplingConfig(temperature=1.0, top_p=0.9, max_new_tokens=12, batch_size=3)
    first = tiny.sample([prompt, prompt[:-2], prompt], [7, 8, 7], config)
    again = tiny.sample([prompt], [7], config)
    assert first.generations[0].token_ids == first.generations[2].token_ids == again.generations[0].token_ids
    assert first.generations[0].token_ids != first.generations[1].token_ids
    assert all(g.finish_reason in ("eos", "length", "stop") for g in first.generations)
    generated = sum(len(g.token_ids) for g in first.generations)
    assert first.cost.tokens_generated == generated and first.cost.calls == 1


def test_greedy_sampling_follows_argmax(tiny):
    prompt = tiny.encode_prompt(tiny.format_prompt("Say something."))
    result = tiny.sample([prompt], [0], SamplingConfig(temperature=0.0, max_new_tokens=6))
    ids = list(prompt)
    for token in result.generations[0].token_ids:
        assert token == int(_full_logprobs(tiny, ids)[-1].argmax())
        ids.append(token)


def test_stop_strings_and_truncation(tiny):
    prompt = tiny.encode_prompt(tiny.format_prompt("Go."))
    free = tiny.sample([prompt], [3], SamplingConfig(temperature=0.0, max_new_tokens=20)).generations[0]
    assert free.finish_reason == "length" and free.truncated and len(free.token_ids) == 20
    stop = free.text[len(free.text) // 2 : len(free.text) // 2 + 2]
    stopped = tiny.sample([prompt], [3], SamplingConfig(temperature=0.0, max_new_tokens=20, stop_strings=(stop,)))
    generation = stopped.generations[0]
    assert generation.finish_reason == "stop" and generation.text.endswith(stop)
    assert len(generation.token_ids) < 20


def draw_counts(probs: list[float], config: SamplingConfig, draws: int = 4000) -> np.ndarray:
    logits = torch.log(torch.tensor([probs] * draws))
    picks = select_tokens(logits, config, [torch.Generator().manual_seed(i) for i in range(draws)])
    return np.bincount(picks.numpy(), minlength=len(probs)) / draws


def test_top_p_samples_the_renormalised_nucleus():
    probs = [0.5, 0.3, 0.15, 0.05]
    frequencies = draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.75))  # 0.5 < 0.75 <= 0.5 + 0.3
    assert frequencies[2:].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(frequencies[:2], [0.625, 0.375], atol=0.03)
    assert draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.4)).tolist() == [1.0, 0.0, 0.0, 0.0]
    both = draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.8, top_k=3))  # nucleus of the renormalised top-3
    np.testing.assert_allclose(both, [0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0], atol=0.03)


def test_a_nucleus_wider_than_the_first_head_is_found_whole():
    """A flat tail puts 300 tokens in the nucleus: the head grows past its first 64 and every one is drawn."""
    probs = [0.1] + [0.9 / 3000] * 3000
    frequencies = draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.19), draws=20000)
    kept = int(np.ceil((0.19 - 0.1) / (0.9 / 3000)))  # tokens needed after the top one to reach 0.19
    drawn = int((frequencies[1:] > 0).sum())  # which of the equal tail tokens are kept is arbitrary: count them
    assert kept - 1 <= drawn <= kept + 1
    assert frequencies[0] == pytest.approx(0.1 / 0.19, abs=0.02)


def test_context_length_error_names_both_numbers(tiny):
    limit = tiny.context_length
    with pytest.raises(ContextLengthError, match=f"is {limit + 5} tokens but the model's context is {limit} tokens"):
        tiny.token_stats([5] * (limit + 5), start=1)
    with pytest.raises(ContextLengthError):
        tiny.score_continuations([5] * 10, [Continuation(10, (), (1,) * limit)])


def test_out_of_memory_suggests_4bit_or_smaller_model(tiny, monkeypatch):
    def explode(**_kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(
        tiny,
        "model",
        type(
            "Boom",
            (),
            {"__call__": staticmethod(explode), "parameters": tiny.model.parameters, "config": tiny.model.config},
        )(),
    )
    with pytest.raises(ModelOutOfMemoryError, match="4-bit.*smaller model"):
        tiny.token_stats([5, 6, 7], start=1)


def test_meter_accumulates_costs(tiny):
    before = tiny.meter.total.calls
    tiny.token_stats(tiny.encode("one two three"), start=1)
    tiny.token_stats(tiny.encode("four five"), start=1)
    assert tiny.meter.total.calls == before + 2
    assert tiny.meter.history[-1][0] == "token_stats"


def test_sampling_after_prefixes_equals_sampling_each_prompt(tiny):
    """One prefill of the sequence serves every prefix: same tokens as sampling each prompt on its own."""
    from rredcot_viz.types import PrefixSampling

    ids = tiny.encode_prompt(tiny.format_prompt("What is 12 * 4 - 6?")) + tiny.encode(TEXT)
    config = SamplingConfig(temperature=1.0, top_p=0.95, max_new_tokens=8, batch_size=2)
    trigger = tuple(tiny.encode(" so"))
    requests = [
        PrefixSampling(10, (), (1, 2, 3)),
        PrefixSampling(len(ids), trigger, (4, 5)),
        PrefixSampling(25, (), (6,)),
    ]
    shared = tiny.sample_after_prefixes(ids, requests, config)
    for request, generations in zip(requests, shared, strict=True):
        prompts = [ids[: request.prefix] + list(request.context)] * len(request.seeds)
        alone = tiny.sample(prompts, list(request.seeds), config).generations
        assert [g.token_ids for g in generations] == [g.token_ids for g in alone]
        assert [g.seed for g in generations] == list(request.seeds)
    assert tiny.meter.history[-1 - len(requests)][0] == "sample_after_prefixes"


def test_stop_on_answer_ends_a_row_after_a_complete_box(tiny, monkeypatch):
    from rredcot_viz.model.sampling import SamplingConfig as Config

    boxed = tiny.encode(" \\boxed{8} and more")
    steps = iter(boxed)
    monkeypatch.setattr(
        "rredcot_viz.model.generate.select_tokens", lambda logits, config, gens: torch.tensor([next(steps)])
    )
    prompt = tiny.encode_prompt(tiny.format_prompt("q"))
    generation = tiny.sample([prompt], [0], Config(max_new_tokens=30, stop_on_answer=True)).generations[0]
    assert generation.finish_reason == "answer" and generation.text.endswith("\\boxed{8}")
