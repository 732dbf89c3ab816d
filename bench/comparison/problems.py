"""Drawing the compare bench's traces: the problem pool, screening by pass rate, the split of each problem."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from comparison.rows import SPLITS
from comparison.stats import held_out_split
from rredcot_viz.model.backends import Sampler
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.paths import shared_data_dir
from rredcot_viz.traces.answers import extract_answer, extract_answer_detailed
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.sampler import problem_prompt
from rredcot_viz.training.task import BUILTIN_STOP, Problem, builtin_problems, reward

GSM8K_FILE = ("gsm8k", "test.jsonl")


def problem_pool(count: int, seed: int, source: str = "builtin") -> list[Problem]:
    """The first ``count`` one-operation built-in problems from ``seed``, or (``gsm8k``) the first ``count`` GSM8K
    test problems in an order shuffled by ``seed``; prefix-stable either way: asking for more problems keeps the
    first ``count``, so a resumed run screens only the new ones."""
    if source == "gsm8k":
        return gsm8k_problems(seed)[:count]
    return one_operation(builtin_problems(6 * count + 60, seed=seed))[:count]


def gsm8k_file() -> Path:
    return shared_data_dir().joinpath(*GSM8K_FILE)


def gsm8k_problems(seed: int) -> list[Problem]:
    """Every problem of ``../shared/data/gsm8k/test.jsonl`` (read at run time, never copied), in an order shuffled
    by ``seed``: the question alone as the user turn (the trainer's system prompt asks for 'The answer is N.'),
    Y* the text after ``####``, U* the rationale without its calculator annotations (the gsm8k importer's
    mapping). Raises ``FileNotFoundError`` naming the file when it is absent."""
    from rredcot_viz.traces.importers.gsm8k import Gsm8kImporter

    path = gsm8k_file()
    if not path.is_file():
        raise FileNotFoundError(f"--problems-from gsm8k needs {path} (shared/data's GSM8K test set); it is absent")
    importer = Gsm8kImporter()
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    problems = []
    for line in lines:
        (trace,) = importer.convert(json.loads(line))
        problems.append(Problem(trace.question, trace.reference_answer, trace.reference_solution, source="gsm8k"))
    order = np.random.default_rng(seed).permutation(len(problems))
    return [problems[i] for i in order]


def excluded_questions(exclude_seed: int | None) -> set[str]:
    """The problems the earlier protocol drew its traces from (its first 40 one-operation problems with
    ``exclude_seed``): they chose today's defaults, so none of them gives a trace here."""
    if exclude_seed is None:
        return set()
    return {p.question for p in one_operation(builtin_problems(120, seed=exclude_seed))[:40]}


def one_operation(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.solution.count("\n") == 2]


def screen_problems(
    lm: LanguageModel, sampler: Sampler, pool: list[Problem], first: int, args: argparse.Namespace
) -> tuple[list[dict], list[dict]]:
    """Screen ``pool[first:]`` (``--screen`` samples each, row j of problem i seeded seed * 10^5 + 100 i + j):
    every problem's pass rate, and its traces (``draw_from_samples``)."""
    todo = list(range(first, len(pool)))
    config = SamplingConfig(
        0.7, 0.95, max_new_tokens=512, stop_strings=BUILTIN_STOP, stop_on_answer=True, batch_size=64
    )
    rows = [(i, j) for i in todo for j in range(args.screen)]
    prompts = [lm.encode_prompt(problem_prompt(lm, pool[i])) for i, _ in rows]
    result = sampler.sample(prompts, [sample_seed(args.seed, i, j) for i, j in rows], config) if rows else None
    texts = {i: [result.generations[n * args.screen + j].text for j in range(args.screen)] for n, i in enumerate(todo)}
    return draw_from_samples(lm, pool, texts, args)


def sample_seed(seed: int, problem: int, row: int) -> int:
    return seed * 100_000 + 100 * problem + row


def draw_from_samples(
    lm: LanguageModel, pool: list[Problem], texts: dict[int, list[str]], args: argparse.Namespace
) -> tuple[list[dict], list[dict]]:
    """Each screened problem's pass rate, and one correct and one failed trace (as saved) per problem in band
    that the earlier protocol did not use: the first sample, in seed order, with enough lines of working that
    ends by stating its answer."""
    excluded = excluded_questions(args.exclude_seed)
    screened, drawn = [], []
    for i, samples in texts.items():
        problem = pool[i]
        rewards = [reward(text, problem.answer) for text in samples]
        rate = float(np.mean(rewards))
        screened.append({"problem": i, "pass_rate": rate, "excluded": problem.question in excluded})
        if not 0.2 <= rate <= 0.8 or problem.question in excluded:
            continue
        for wanted in (1.0, 0.0):
            pick = next(
                (
                    (j, text)
                    for j, (text, r) in enumerate(zip(samples, rewards, strict=True))
                    if r == wanted and steps_before_answer(text, args.min_lines)
                ),
                None,
            )
            if pick is not None:
                drawn.append(
                    {
                        "trace": f"{problem.source}-{i}-{'correct' if wanted else 'failed'}",
                        "problem": i,
                        "split": held_out_split(problem.question, args.split_seed, SPLITS),
                        "question": problem.question,
                        "prompt": problem_prompt(lm, problem),
                        "cot": pick[1],
                        "reference_answer": problem.answer,
                        "reference_solution": problem.solution,
                        "correct": bool(wanted),
                        "seed": sample_seed(args.seed, i, pick[0]),
                        "pass_rate": rate,
                    }
                )
    return screened, drawn


def as_trace(drawn: dict, generator: str) -> Trace:
    return Trace(
        question=drawn["question"],
        cot=drawn["cot"],
        prompt=drawn["prompt"],
        reference_answer=drawn["reference_answer"],
        reference_solution=drawn["reference_solution"],
        correct=drawn["correct"],
        final_answer=extract_answer(drawn["cot"]),
        source="generated",
        trace_id=drawn["trace"],
        metadata={"generator": generator, "seed": drawn["seed"], "pass_rate": drawn["pass_rate"]},
    )


def steps_before_answer(text: str, min_lines: int = 3) -> bool:
    """At least ``min_lines`` - 1 lines of working, then the answer stated on the last line."""
    lines = [line for line in text.splitlines() if line.strip()]
    found = extract_answer_detailed(text)
    stated = found is not None and found.method != "last_number"
    return len(lines) >= min_lines and stated and found.start > text.rstrip().rfind("\n")
