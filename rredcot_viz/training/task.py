"""Verifiable problems for the trainer: a built-in set of short arithmetic word problems the embedded model
can partly solve (bench/trainer.py prints the measured starting accuracy), or user problems taken from any
importable file with reference answers (GSM8K JSONL included).

The built-in problems are generated from templates written for this project, seeded, with a held-out
split; each has a one-line reference solution for v-hat.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rredcot_viz.errors import ConfigError
from rredcot_viz.traces.answers import grade_text
from rredcot_viz.traces.trace import Trace

BUILTIN_SYSTEM = (
    "You solve short arithmetic word problems. Write the working one step per line, then 'The answer is N.'"
)
BUILTIN_SHOT = (  # one step per line, so a completion has several segments to credit (not just the answer line)
    "Example: Ann has 3 pears and picks 4 more. How many pears does Ann have?\n"
    "Working:\nAnn starts with 3 pears.\nShe picks 4 more, so 3 + 4 = 7.\nThe answer is 7.\n\n"
)
BUILTIN_STOP = ("\nProblem:",)  # past it the model writes (and answers) a problem of its own
NAMES = ["Sam", "Mia", "Leo", "Ava", "Noor", "Kai", "Ines", "Tom", "Zoe", "Ravi", "Lena", "Omar"]
THINGS = ["apples", "cards", "stickers", "shells", "coins", "marbles", "pencils", "stamps", "beads", "books"]


@dataclass(frozen=True)
class Problem:
    question: str
    answer: str
    solution: str | None = None
    prompt: str | None = None  # the user turn; None = the question alone
    system: str | None = None
    source: str = "builtin"
    stop: tuple[str, ...] = ()  # a rollout ends here too (the few-shot prompt's next "Problem:")


def _builtin(rng: random.Random) -> Problem:
    name, thing = rng.choice(NAMES), rng.choice(THINGS)
    kind = rng.random()
    start = f"{name} starts with {{a}} {thing}."
    if kind < 0.5:
        a, b = rng.randint(1, 6), rng.randint(1, 4)
        verb = rng.choice(["buys", "finds", "gets", "is given"])
        question = f"{name} has {a} {thing} and {verb} {b} more. How many {thing} does {name} have?"
        steps, answer = [f"{verb.capitalize()} {b} more, so {a} + {b} = {a + b}."], a + b
    elif kind < 0.75:
        a, b = rng.randint(4, 9), rng.randint(1, 3)
        question = f"{name} has {a} {thing} and gives away {b}. How many {thing} does {name} have left?"
        steps, answer = [f"Gives away {b}, so {a} - {b} = {a - b}."], a - b
    else:
        a, b, c = rng.randint(2, 6), rng.randint(1, 4), rng.randint(1, 2)
        question = f"{name} has {a} {thing}, gets {b} more and then gives away {c}. How many {thing} are left?"
        steps = [f"Gets {b} more, so {a} + {b} = {a + b}.", f"Gives away {c}, so {a + b} - {c} = {a + b - c}."]
        answer = a + b - c
    working = "\n".join([start.format(a=a), *steps])
    prompt = BUILTIN_SHOT + f"Problem: {question}\nWorking:\n"
    solution = f"{working}\nThe answer is \\boxed{{{answer}}}."
    return Problem(question, str(answer), solution, prompt, BUILTIN_SYSTEM, stop=BUILTIN_STOP)


def builtin_problems(count: int, seed: int = 0) -> list[Problem]:
    """``count`` distinct built-in problems from a seeded generator (train and held-out use other seeds)."""
    rng = random.Random(seed)
    seen: dict[str, Problem] = {}
    attempts = 0
    while len(seen) < count:
        attempts += 1
        if attempts > 50 * count:
            raise ConfigError(f"cannot draw {count} distinct built-in problems; ask for fewer")
        problem = _builtin(rng)
        seen.setdefault(problem.question, problem)
    return list(seen.values())


def builtin_split(train: int = 200, held_out: int = 32, seed: int = 0) -> tuple[list[Problem], list[Problem]]:
    """Disjoint train and held-out problem sets."""
    pool = builtin_problems(train + held_out, seed)
    return pool[:train], pool[train:]


def problems_from_traces(traces: list[Trace]) -> list[Problem]:
    """User problems: every trace with a reference answer (and its reference solution, if any)."""
    problems = [
        Problem(t.question, t.reference_answer, t.reference_solution, source=t.source)
        for t in traces
        if t.reference_answer
    ]
    if not problems:
        raise ConfigError("none of these traces has a reference answer, so there is nothing to reward against")
    return problems


def reward(text: str, answer: str) -> float:
    """1 when the whole completion (a reset's kept prefix included) states an answer explicitly equal to the
    reference, else 0: the grader Monte Carlo uses too (``grade_text``)."""
    return float(grade_text(text, answer).correct)
