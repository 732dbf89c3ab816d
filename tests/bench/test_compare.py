"""bench/compare.py draws its screening samples and Monte Carlo rollouts from the configured sampler
(``--sampler``), here an OpenAI-compatible fake server (tests/fake_openai.py) on a tiny model: the server gets
every request, and the results equal the local sampler's (the fake answers from the same model)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from fake_openai import FakeOpenAIServer

from rredcot_viz.model.backends import SamplerSpec
from rredcot_viz.model.backends.openai import OpenAIConfig

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench scripts import their neighbours
compare = importlib.import_module("compare")

ARGS = argparse.Namespace(
    screen=2, seed=11, min_lines=3, exclude_seed=None, split_seed=0, segmenter="fixed_tokens", k=3,
    mc_max_tokens=8, sampler="openai",
)  # fmt: skip


def test_screening_samples_through_the_configured_server(tiny):
    pool = compare.problem_pool(3, ARGS.seed)
    local = compare.screen_problems(tiny, SamplerSpec().build(tiny), pool, 0, ARGS)
    with FakeOpenAIServer(tiny) as server:
        remote = compare.screen_problems(tiny, SamplerSpec("openai", OpenAIConfig(url=server.url)).build(tiny),
                                         pool, 0, ARGS)  # fmt: skip
        seeds = sorted(r["seed"] for r in server.completions)
    assert seeds == sorted(compare.sample_seed(ARGS.seed, i, j) for i in range(3) for j in range(2))
    assert remote == local
    assert [s["problem"] for s in remote[0]] == [0, 1, 2]


def test_monte_carlo_rollouts_go_to_the_configured_server(tiny):
    problem = compare.problem_pool(1, ARGS.seed)[0]
    drawn = {"trace": "builtin-0-correct", "problem": 0, "split": "selection", "question": problem.question,
             "prompt": problem.question, "cot": "First 2 + 3 = 5.\nThen we check it.\nThe answer is 5.",
             "reference_answer": problem.answer, "reference_solution": problem.solution, "correct": True,
             "seed": 1, "pass_rate": 0.5}  # fmt: skip
    with FakeOpenAIServer(tiny) as server:
        sampler = SamplerSpec("openai", OpenAIConfig(url=server.url)).build(tiny)
        result = compare.score_trace(tiny, sampler, drawn, ARGS)
        sent = len(server.completions)
    rollouts_per_state = compare.REFERENCE_N + max(compare.MC_NS)
    assert result.k == 3
    assert sent == rollouts_per_state * result.k  # every state before the terminal one (s_1..s_K), none locally
