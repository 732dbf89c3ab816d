"""bench/compare.py draws its screening samples and Monte Carlo rollouts from the configured sampler
(``--sampler``), here an OpenAI-compatible fake server (tests/fake_openai.py) on a tiny model: the server gets
every request, and the results equal the local sampler's (the fake answers from the same model)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np
from fake_openai import FakeOpenAIServer

from rredcot_viz.model.backends import SamplerSpec
from rredcot_viz.model.backends.openai import OpenAIConfig

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench scripts import their neighbours
problems = importlib.import_module("comparison.problems")
rows = importlib.import_module("comparison.rows")
saved = importlib.import_module("comparison.saved")
scoring = importlib.import_module("comparison.scoring")

ARGS = argparse.Namespace(
    screen=2, seed=11, min_lines=3, exclude_seed=None, split_seed=0, segmenter="fixed_tokens", k=3,
    mc_max_tokens=8, sampler="openai",
)  # fmt: skip


def test_screening_samples_through_the_configured_server(tiny):
    pool = problems.problem_pool(3, ARGS.seed)
    local = problems.screen_problems(tiny, SamplerSpec().build(tiny), pool, 0, ARGS)
    with FakeOpenAIServer(tiny) as server:
        remote = problems.screen_problems(tiny, SamplerSpec("openai", OpenAIConfig(url=server.url)).build(tiny),
                                         pool, 0, ARGS)  # fmt: skip
        seeds = sorted(r["seed"] for r in server.completions)
    assert seeds == sorted(problems.sample_seed(ARGS.seed, i, j) for i in range(3) for j in range(2))
    assert remote == local
    assert [s["problem"] for s in remote[0]] == [0, 1, 2]


def test_monte_carlo_rollouts_go_to_the_configured_server(tiny):
    problem = problems.problem_pool(1, ARGS.seed)[0]
    drawn = {"trace": "builtin-0-correct", "problem": 0, "split": "selection", "question": problem.question,
             "prompt": problem.question, "cot": "First 2 + 3 = 5.\nThen we check it.\nThe answer is 5.",
             "reference_answer": problem.answer, "reference_solution": problem.solution, "correct": True,
             "seed": 1, "pass_rate": 0.5}  # fmt: skip
    with FakeOpenAIServer(tiny) as server:
        sampler = SamplerSpec("openai", OpenAIConfig(url=server.url)).build(tiny)
        result = scoring.score_trace(tiny, sampler, drawn, ARGS)
        sent = len(server.completions)
    rollouts_per_state = rows.REFERENCE_N + max(rows.MC_NS)
    assert result.k == 3
    assert sent == rollouts_per_state * result.k  # every state before the terminal one (s_1..s_K), none locally


def test_mc_from_redraws_monte_carlo_keeps_every_outcome_and_carries_the_other_rows():
    """``--mc-from``: Monte Carlo is drawn again (graded on the state plus the rollout) and every rollout's
    outcome is kept; the rows that never sample come from the saved record unchanged."""
    from toy import ToySampler

    lm = ToySampler(lambda context: [0.1, 0.9, 0.5][min(context.count("\n") - context.count("\n", 0, 2), 2)])
    cot = "First 2 + 3 = 5.\nThen we check it.\nThe answer is 5."
    carried = {"k": 3, "cot": cot, "scores": {"rredcot": [0.2, 0.3, 0.5], "mc4": [9.0, 9.0, 9.0]},
               "tokens": {"rredcot": 40}, "seconds": {"rredcot": 1.5}}  # fmt: skip
    drawn = {"trace": "t", "problem": 0, "split": "selection", "question": "2 + 3?", "prompt": "2 + 3?", "cot": cot,
             "reference_answer": "7", "reference_solution": None, "correct": False, "seed": 1, "pass_rate": 0.5,
             "carried": carried}  # fmt: skip
    args = argparse.Namespace(**(vars(ARGS) | {"segmenter": "line", "k": 0}))
    result = scoring.score_trace(lm, SamplerSpec().build(lm), drawn, args)
    assert result.k == 3 and result.usable
    assert [len(o) for o in result.outcomes] == [rows.REFERENCE_N + max(rows.MC_NS)] * 3  # s_1..s_K
    assert result.scores["rredcot"].tolist() == [0.2, 0.3, 0.5] and result.tokens["rredcot"] == 40
    assert result.scores["mc4"].tolist() != [9.0, 9.0, 9.0]  # Monte Carlo rows are drawn, never carried
    values = [o[: rows.REFERENCE_N].count("1") / rows.REFERENCE_N for o in result.outcomes]
    np.testing.assert_allclose(result.reference_values[:-1], values)
    again = saved.from_record(saved.record(result, 8))
    assert again.outcomes == result.outcomes
