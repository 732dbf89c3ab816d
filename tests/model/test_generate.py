"""Generation (model/generate.py) on tiny random models: reproducible per row, greedy, stop strings, sampling
after shared prefixes, stopping on an answer, and the entropies recorded while sampling."""

from __future__ import annotations

import numpy as np
import torch

from rredcot_viz.model.sampling import SamplingConfig

from .forward import TEXT, full_logprobs


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
        assert token == int(full_logprobs(tiny, ids)[-1].argmax())
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


def test_sampling_records_the_entropies_the_scoring_pass_computes(policy):
    """The segmenter must see the same entropies in the trainer (recorded while sampling) as in the analyzer."""
    prompt_ids = policy.encode_prompt("Question: what is 3 + 5?")
    (generation,) = policy.sample([prompt_ids], [7], SamplingConfig(temperature=1.0, max_new_tokens=12)).generations
    assert len(generation.entropies) == len(generation.token_ids) > 0
    stats = policy.token_stats(prompt_ids + generation.token_ids, start=len(prompt_ids))
    np.testing.assert_allclose(generation.entropies, stats.entropies, atol=1e-4)


def test_every_decode_step_reports_rows_and_tokens(tiny):
    """The sampler's heartbeat: rows finished of all asked (across batches), tokens so far; a listener that
    raises stops the call at that step."""
    import pytest

    from rredcot_viz.model.meter import listen, measure

    prompt = tiny.encode_prompt(tiny.format_prompt("Count to five."))
    config = SamplingConfig(temperature=1.0, max_new_tokens=5, batch_size=2)
    beats = []
    with measure() as spent, listen(lambda: beats.append((spent.rows, spent.so_far.tokens_generated))):
        result = tiny.sample([prompt] * 3, [1, 2, 3], config)
    assert beats[-1] == ((3, 3), result.cost.tokens_generated)
    assert [rows for rows, _ in beats] == sorted(rows for rows, _ in beats)  # rows only ever finish
    assert {total for (_, total), _ in beats} == {3} and beats[0][0][0] in (0, 1, 2)
    assert [tokens for _, tokens in beats] == sorted(tokens for _, tokens in beats)

    class Stop(Exception):
        pass

    def stop_at_third_step():
        if len(calls) == 2:
            raise Stop
        calls.append(1)

    calls: list[int] = []
    with listen(stop_at_third_step), pytest.raises(Stop):
        tiny.sample([prompt] * 3, [1, 2, 3], SamplingConfig(temperature=1.0, max_new_tokens=50, batch_size=4))
    assert len(calls) == 2
    assert tiny.sample([prompt], [1], config).generations  # the model's lock was released
