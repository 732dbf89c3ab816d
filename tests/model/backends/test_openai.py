"""The ``openai`` sampler against a fake OpenAI-compatible server on a free localhost port (tests/fake_openai.py),
backed by a tiny random model: rollouts equal the local sampler's, the probe refuses another model, and retries,
timeouts, concurrency, the API key and the cost meter behave as configured. The real engine: tests/engine/."""

from __future__ import annotations

import time

import pytest
from fake_openai import FakeOpenAIServer
from tiny import tiny_lm

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import SamplerError, SamplerMismatchError
from rredcot_viz.estimators import estimators
from rredcot_viz.model.backends import SamplerSpec, build_sampler
from rredcot_viz.model.backends.openai import OpenAIConfig, OpenAISampler
from rredcot_viz.model.meter import measure
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import PrefixSampling

CONFIG = SamplingConfig(temperature=1.0, top_p=0.9, max_new_tokens=24, batch_size=4)
TRACE = Trace(
    "Tom has 3 apples and buys 5 more. How many apples does he have?",
    "Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nThe answer is \\boxed{8}.",
    reference_answer="8",
)


def server_sampler(lm, server: FakeOpenAIServer, **settings) -> OpenAISampler:
    sampler = SamplerSpec("openai", OpenAIConfig(url=server.url, **settings)).build(lm)
    assert isinstance(sampler, OpenAISampler)
    return sampler


def prompt(lm) -> list[int]:
    return lm.encode_prompt(lm.format_prompt("Count to five."))


def test_rollouts_equal_the_local_samplers_token_for_token(tiny):
    ids = prompt(tiny)
    with FakeOpenAIServer(tiny) as server:
        remote = server_sampler(tiny, server).sample([ids, ids, ids[:-2]], [7, 8, 9], CONFIG)
    local = tiny.sample([ids, ids, ids[:-2]], [7, 8, 9], CONFIG)
    assert [g.token_ids for g in remote.generations] == [g.token_ids for g in local.generations]
    assert [g.text for g in remote.generations] == [g.text for g in local.generations]
    assert [g.seed for g in remote.generations] == [7, 8, 9]
    sent = sorted(server.completions, key=lambda r: r["seed"])  # they arrive in any order
    assert [(r["prompt"], r["seed"]) for r in sent] == [(ids, 7), (ids, 8), (ids[:-2], 9)]
    assert all(r["return_token_ids"] and r["max_tokens"] == 24 and r["temperature"] == 1.0 for r in sent)


def test_the_local_stop_rules_cut_a_server_rollout_where_the_local_sampler_stops(tiny):
    ids = prompt(tiny)
    free = tiny.sample([ids], [3], SamplingConfig(temperature=0.0, max_new_tokens=20)).generations[0]
    stop = tiny.decode(free.token_ids[4:6])
    config = SamplingConfig(temperature=0.0, max_new_tokens=20, stop_strings=(stop,))
    with FakeOpenAIServer(tiny) as server:
        (remote,) = server_sampler(tiny, server).sample([ids], [3], config).generations
    (local,) = tiny.sample([ids], [3], config).generations
    assert (remote.token_ids, remote.text, remote.finish_reason) == (local.token_ids, local.text, "stop")
    assert server.completions[0]["stop"] == [stop] and server.completions[0]["include_stop_str_in_output"]


def test_an_end_of_sequence_token_ends_the_rollout_and_is_not_kept(tiny):
    eos = tiny.tokenizer.eos_token_id
    generation = tiny.finish_generation(5, [10, 11, eos, 12], 1, CONFIG, "eos")
    assert (generation.token_ids, generation.finish_reason) == ([10, 11], "eos")
    assert tiny.finish_generation(5, [10, 11], 1, CONFIG, "length").finish_reason == "length"


def test_sampling_after_prefixes_sends_each_prefix_with_its_seeds(tiny):
    ids = prompt(tiny)
    requests = [PrefixSampling(len(ids) - 3, (5,), (1, 2)), PrefixSampling(len(ids), (), (3,))]
    with FakeOpenAIServer(tiny) as server:
        remote = server_sampler(tiny, server).sample_after_prefixes(ids, requests, CONFIG)
    local = tiny.sample_after_prefixes(ids, requests, CONFIG)
    assert [[g.seed for g in row] for row in remote] == [[1, 2], [3]]
    assert [[g.prompt_length for g in row] for row in remote] == [[len(ids) - 2] * 2, [len(ids)]]
    assert sorted(map(tuple, (r["prompt"] for r in server.completions))) == sorted(
        [tuple([*ids[:-3], 5])] * 2 + [tuple(ids)]
    )
    assert [[g.token_ids for g in row] for row in remote] == [[g.token_ids for g in row] for row in local]


def test_the_probe_accepts_the_same_model_and_names_both_fingerprints_for_another():
    lm, other = tiny_lm(0), tiny_lm(1)
    with FakeOpenAIServer(lm) as server:
        assert "mean |Δ log-prob| 0 nats" in server_sampler(lm, server).check()
        stranger = server_sampler(other, server)
        with pytest.raises(SamplerMismatchError) as raised:
            stranger.sample([prompt(other)], [0], CONFIG)
        assert not server.completions  # nothing was sampled from the wrong model
    message = str(raised.value)
    assert "server serves 'tiny'" in message and "fingerprint tiny1" in message
    assert message.count("probe fingerprint") == 2 and "above the tolerance 0.1" in message


def test_the_tolerance_decides_and_the_check_can_be_turned_off():
    lm, other = tiny_lm(0), tiny_lm(1)
    with FakeOpenAIServer(lm) as server:
        assert "mean |Δ log-prob|" in server_sampler(other, server, tolerance=50.0).check()
        unchecked = server_sampler(other, server, check_model=False)
        assert "not checked" in unchecked.check()
        assert len(unchecked.sample([prompt(other)], [0], CONFIG).generations) == 1


def test_a_server_without_prompt_logprobs_says_how_to_go_on(tiny):
    with FakeOpenAIServer(tiny, prompt_logprobs=False) as server, pytest.raises(SamplerError, match="check_model off"):
        server_sampler(tiny, server).check()


def test_transient_failures_are_retried_with_backoff(tiny):
    with FakeOpenAIServer(tiny, failures=2) as server:
        sampler = server_sampler(tiny, server, retries=2, backoff=0.01, check_model=False)
        (generation,) = sampler.sample([prompt(tiny)], [4], CONFIG).generations
    assert len(server.completions) == 3 and generation.seed == 4


def test_retries_give_up_with_a_clear_error(tiny):
    with FakeOpenAIServer(tiny, failures=9, failure_status=502) as server:
        sampler = server_sampler(tiny, server, retries=1, backoff=0.0, check_model=False)
        with pytest.raises(SamplerError, match=r"did not answer after 2 tries \(HTTP 502"):
            sampler.sample([prompt(tiny)], [4], CONFIG)
    assert len(server.completions) == 2


def test_a_refused_request_is_not_retried(tiny):
    with FakeOpenAIServer(tiny) as server:
        sampler = server_sampler(tiny, server, retries=3, check_model=False)
        with pytest.raises(SamplerError, match=r"HTTP 400.*out of vocabulary"):
            sampler.sample([[10**6]], [0], CONFIG)
    assert len(server.completions) == 1


def test_a_stalled_server_times_out(tiny):
    """Only completions stall; the model listing before them shares the timeout, so it is long enough for a
    listing on a loaded machine (0.2 s timed the listing out once under a full CI run)."""
    with FakeOpenAIServer(tiny, delay=3.0) as server:
        sampler = server_sampler(tiny, server, timeout=1.0, retries=1, backoff=0.0, check_model=False)
        with pytest.raises(SamplerError, match=r"after 2 tries \(timed out\)"):
            sampler.sample([prompt(tiny)], [0], CONFIG)


def test_no_server_at_the_url_is_a_clear_error(tiny):
    with FakeOpenAIServer(tiny) as server:
        url = server.url
    sampler = SamplerSpec("openai", OpenAIConfig(url=url, retries=0)).build(tiny)
    with pytest.raises(SamplerError, match="is it running"):
        sampler.check()


def test_at_most_concurrency_requests_are_in_flight(tiny):
    with FakeOpenAIServer(tiny, delay=0.15) as server:
        sampler = server_sampler(tiny, server, concurrency=3, check_model=False)
        done = []
        result = sampler.sample([prompt(tiny)] * 8, list(range(8)), CONFIG, progress=lambda d, t: done.append(d))
    assert server.max_in_flight == 3 and len(result.generations) == 8 and done == list(range(1, 9))


def test_the_api_key_comes_from_the_named_environment_variable(tiny, monkeypatch):
    monkeypatch.setenv("RREDCOT_TEST_KEY", "sekrit")
    with FakeOpenAIServer(tiny) as server:
        server_sampler(tiny, server, api_key_env="RREDCOT_TEST_KEY").sample([prompt(tiny)], [0], CONFIG)
        server_sampler(tiny, server, check_model=False).sample([prompt(tiny)], [0], CONFIG)
    assert {h.get("Authorization") for h in server.headers} == {"Bearer sekrit", None}


def test_the_served_model_is_the_servers_only_one_or_the_named_one(tiny):
    with FakeOpenAIServer(tiny, name="served") as server:
        assert server_sampler(tiny, server).served_model == "served"
        with pytest.raises(SamplerError, match="serves served, not 'other'"):
            server_sampler(tiny, server, model="other").served_model  # noqa: B018


def test_the_cost_meter_counts_the_servers_tokens_and_seconds(tiny):
    ids = prompt(tiny)
    with FakeOpenAIServer(tiny) as server:
        sampler = server_sampler(tiny, server, check_model=False)
        with measure() as spent:
            result = sampler.sample([ids, ids], [1, 2], CONFIG)
    assert spent.cost.calls == 1 and spent.cost.tokens_processed == 2 * len(ids)
    assert spent.cost.tokens_generated == sum(len(g.token_ids) + (g.finish_reason == "eos") for g in result.generations)
    assert spent.cost.seconds > 0 and tiny.meter.history[-1][0] == "sample"


def test_monte_carlo_through_the_server_stores_its_rollouts_apart_and_reuses_them(tiny):
    estimator = estimators.get("mc")(rollouts=3, max_new_tokens=12)
    segmenter = segmenters.get("line")()
    with FakeOpenAIServer(tiny) as server:
        sampler = server_sampler(tiny, server)
        analyzer = Analyzer(tiny, sampler=sampler)
        first = analyzer.analyze(TRACE, segmenter, estimator)
        sent = len(server.completions)
        again = analyzer.analyze(TRACE, segmenter, estimator)
        assert len(server.completions) == sent == 3 * first.k  # three rollouts per state, none drawn twice
    local = Analyzer(tiny, cache=analyzer.cache).analyze(TRACE, segmenter, estimator)
    assert (first.values.values == again.values.values).all() and first.cost.tokens_generated > 0
    context = analyzer.context(TRACE)
    prefix = first.segmentation.state_prefixes[0]
    remote_rollouts = estimator.rollouts(context, prefix)
    local_rollouts = estimator.rollouts(Analyzer(tiny, cache=analyzer.cache).context(TRACE), prefix)
    assert estimator.sampling_key(context) != estimator.sampling_key(Analyzer(tiny).context(TRACE))
    assert [r.text for r in remote_rollouts] == [r.text for r in local_rollouts]  # same model, same seeds
    assert (local.values.values == first.values.values).all()


def test_the_local_sampler_is_the_default_and_keeps_the_old_store_keys(tiny):
    sampler = build_sampler(tiny)
    assert sampler.name == "local" and sampler.key == () and Analyzer(tiny).sampler.name == "local"
    assert SamplerSpec("vllm", OpenAIConfig()).build(tiny).name == "openai"  # an alias


def test_a_cancel_from_progress_stops_at_once_and_sends_no_more(tiny):
    class Cancelled(Exception):
        pass

    def cancel(done: int, total: int) -> None:
        raise Cancelled

    with FakeOpenAIServer(tiny, delay=0.3) as server:
        sampler = server_sampler(tiny, server, concurrency=2, check_model=False)
        with pytest.raises(Cancelled):
            sampler.sample([prompt(tiny)] * 10, list(range(10)), CONFIG, progress=cancel)
        time.sleep(0.5)
    assert len(server.completions) <= 4  # the first two, and at most the two started while they finished
