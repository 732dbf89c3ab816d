"""Which estimator a page starts on and falls back to, by what each declares it needs (``needs``): any trace
with a stated answer gets one that runs, and the line says which and why."""

from __future__ import annotations

from rredcot_viz.estimators import default_estimator, richer_estimators, usable_estimator
from rredcot_viz.traces.trace import Trace

PASTED = Trace("Tom has 3 boxes of 4 apples and eats 1. How many?", "3 * 4 = 12.\n12 - 1 = 11.\nThe answer is 11.")
LABELLED = PASTED.with_changes(correct=True)  # an upload's is_correct, an RL run's reward
REFERENCED = PASTED.with_changes(reference_answer="11")
SOLVED = REFERENCED.with_changes(reference_solution="3 * 4 - 1 = 11.")


def test_a_trace_with_neither_a_reference_nor_a_label_gets_credit_toward_its_own_answer():
    name, line = usable_estimator("rredcot", PASTED)
    assert name == "own_answer"
    assert line.startswith("Using own_answer instead of rredcot, which needs an outcome (a correct/wrong label")
    assert line.endswith("so the heatmap is credit toward its own final answer: the probability of that answer after "
                          "each segment (1 − that on a trace labelled wrong).")  # fmt: skip
    assert usable_estimator("answer_only", LABELLED)[0] == "own_answer"
    assert usable_estimator("rredcot", REFERENCED)[0] == "answer_only"
    assert usable_estimator("rredcot", SOLVED) == ("rredcot", None)
    flat = Trace("q", "No number here.", correct=False)  # an outcome but no answer to score: flat credit
    assert usable_estimator("rredcot", flat)[0] == "uniform"
    assert usable_estimator("rredcot", Trace("q", "No number here.")) == ("rredcot", None)  # nothing can run


def test_a_trace_that_is_its_own_reference_falls_back_too():
    own = SOLVED.with_changes(reference_solution=SOLVED.cot)
    name, line = usable_estimator("rredcot", own)
    assert name == "answer_only" and line.startswith("Using answer_only instead of rredcot: ")


def test_the_choices_that_need_more_say_what():
    assert richer_estimators(PASTED) == {
        "rredcot": ["outcome", "reference_answer", "reference_solution"],
        "answer_only": ["outcome", "reference_answer"],
        "continue_only": ["outcome", "reference_answer", "reference_solution"],
        "uniform": ["outcome"],
    }
    assert richer_estimators(SOLVED) == {}


def test_a_page_starts_on_an_estimator_that_runs_on_most_of_its_traces():
    run = [LABELLED, LABELLED.with_changes(cot="3 * 4 = 12.\nThe answer is 12.", correct=False)]
    assert default_estimator(run, "rredcot") == "own_answer"  # an RL run without references
    assert default_estimator([REFERENCED, REFERENCED], "rredcot") == "answer_only"
    assert default_estimator([SOLVED, REFERENCED], "answer_only") == "answer_only"  # the page's choice runs on all
    assert default_estimator([SOLVED, SOLVED], "answer_only") == "answer_only"
    assert default_estimator([SOLVED, PASTED], "rredcot") == "own_answer"  # 2 of 2 beats rredcot's 1 of 2
