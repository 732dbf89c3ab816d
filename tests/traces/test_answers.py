"""Answer extraction and equivalence on the tricky cases the datasets produce."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rredcot_viz.traces.answers import (
    Grade,
    answers_equivalent,
    extract_answer,
    extract_answer_detailed,
    find_boxed,
    grade_text,
    normalize_answer,
    numbers_in,
    parse_number,
)


@pytest.mark.parametrize(
    ("text", "answer", "method"),
    [
        (r"so $x = \boxed{\frac{a}{\sqrt{b^{2}}}}$ done", r"\frac{a}{\sqrt{b^{2}}}", "boxed"),  # nested braces
        (r"first \boxed{1}, corrected: \boxed{2}.", "2", "boxed"),  # several boxes: the last
        (r"the area is \fbox{7}", "7", "boxed"),
        (r"Fill in \boxed{} later; it is 4.", "4", "last_number"),  # an empty box is no answer
        ("The answer is 3.5.", "3.5", "answer_is"),  # the sentence's period goes, the decimal point stays
        ("So the final answer is: 12 apples.", "12 apples", "answer_is"),
        ("Final Answer: The final answer is $7$. I hope it is correct.", "$7$", "answer_is"),  # overlapping
        ("2 + 3 = 5\n#### 1,234", "1,234", "gsm8k"),
        ("He eats 3 so 16 - 3 = 13\nA: 26", "26", "a_line"),
        ("So she has 5 left.\n#### 5", "5", "gsm8k"),
        ("I check the work.\n\n# Answer\n\n8, 3, 1", "8, 3, 1", "answer_heading"),  # PRM800K
        ("Answer: 4\nLater work.\n#### 5", "5", "gsm8k"),  # the latest statement wins
        ("I got 3 then 17 apples.", "17", "last_number"),
        ("It costs $1,200.50.", "1,200.50", "last_number"),
        ("The change is -4 degrees", "-4", "last_number"),
    ],
)
def test_extraction(text: str, answer: str, method: str) -> None:
    found = extract_answer_detailed(text)
    assert found is not None and (found.text, found.method) == (answer, method)
    assert text[found.start :].startswith(answer)
    assert extract_answer(text) == answer


@pytest.mark.parametrize("text", ["", "no digits here", "Answer:"])
def test_no_answer(text: str) -> None:
    assert extract_answer(text) is None and extract_answer_detailed(text) is None


def test_find_boxed_spans() -> None:
    text = r"a \boxed{x^{2}} b \boxed{\frac{1}{2} c"  # the second box is never closed
    assert [text[start:end] for start, end in find_boxed(text)] == ["x^{2}"]


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("1,234", "1234"),
        ("1,234,567", "1234567"),
        ("$18", "18"),
        (r"\$18.00", "18"),
        ("$1,200.00", "1200"),
        ("18 dollars", "18"),
        (r"5\text{ cm}", "5"),
        (r"\frac{1}{2}", "0.5"),
        (r"\frac{1}{2}", "1/2"),
        ("0.5", "1/2"),
        ("2/4", "1/2"),
        (r"\dfrac{1}{9}", r"\frac{1}{9}"),
        (r"\frac12", "0.5"),
        (r"2\frac{1}{2}", "2.5"),
        (r"3\dfrac12", "3.5"),
        ("1 1/2", "1.5"),
        (r"-2\frac{1}{2}", "-2.5"),
        ("50%", "50"),
        (r"50\%", "50"),
        ("x = 5", "5"),
        ("x = -5", "-5"),
        ("-3", "-3.0"),
        (r"-\frac{1}{2}", "-0.5"),
        (r"\frac{-1}{2}", "-0.5"),
        ("27.0", "27"),
        (".5", "0.5"),
        ("1.5e3", "1500"),
        (r"10^\circ", "10"),
        (r"\boxed{5}", "5"),
        (r"\left( 3, \frac{\pi}{2} \right)", r"(3,\frac{\pi}{2})"),
        (r"\frac{\sqrt{3}}{2}", r"\dfrac{\sqrt3}{2}"),
        ("(1,2)", "(1, 2)"),
    ],
)
def test_equivalent(left: str, right: str) -> None:
    assert answers_equivalent(left, right)
    assert answers_equivalent(right, left)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("10", "10.5"),
        ("1/2", "2"),
        (r"\frac{1}{2}", "2"),
        ("-5", "5"),
        ("1 1/2", "11/2"),  # a mixed number, not eleven halves
        (r"3\dfrac12", "31/2"),
        ("1,200", "1.2"),
        ("1,2", "12"),
        ("0.333", "1/3"),
        ("x = 5", "x = 6"),
        ("(1,2)", "(2,1)"),
        ("", ""),
        (None, "5"),
        ("5", None),
    ],
)
def test_not_equivalent(left: str | None, right: str | None) -> None:
    assert not answers_equivalent(left, right)
    assert not answers_equivalent(right, left)


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("1,234", Fraction(1234)),
        (r"\$1,200", Fraction(1200)),
        (r"-\frac{3}{4}", Fraction(-3, 4)),
        ("-(3)", Fraction(-3)),
        ("2.5e3", Fraction(2500)),
        ("1/0", None),
        (r"\frac{1}{0}", None),
        (r"\pi", None),
        ("(1,2)", None),
    ],
)
def test_parse_number(answer: str, value: Fraction | None) -> None:
    assert parse_number(answer) == value


def test_normalize_and_numbers() -> None:
    assert normalize_answer(r"$\left( 3, \dfrac{\pi}{2} \right)$.") == r"(3,\frac{\pi}{2})"
    assert normalize_answer("x = 1,000") == "1000"
    assert numbers_in("2 + 3 = 5, then 5 * 1,000 = 5000.") == ["2", "3", "5", "1000", "5000"]


@pytest.mark.parametrize(
    ("state", "rollout", "answer", "correct"),
    [
        ("Step one.\nThe answer is", " 7.", "7", True),  # a state cut inside the answer sentence
        ("Step one.\nSo it is \\boxed{", "7}.", "7", True),  # inside the box
        ("The answer is 5.\n", "Wait, 3 + 4 = 7, so the answer is 7.", "7", True),  # the rollout corrects it
        ("The answer is 7.\n", "No: the answer is 5.", "5", False),  # ... or spoils it
        ("Three plus four", " is a sum we can do", None, False),  # states nothing: no stray number counts
        ("3 + 4 = 7", "", None, False),
    ],
)
def test_grade_reads_the_state_and_the_rollout(state: str, rollout: str, answer: str | None, correct: bool) -> None:
    grade = grade_text(state + rollout, "7")
    assert (grade.answer, grade.correct) == (answer, correct)


def test_a_rollout_inside_the_answer_sentence_states_nothing_alone() -> None:
    """Why the state's text is part of what is graded: " 7." and "7}." alone state no answer."""
    assert grade_text(" 7.", "7") == Grade(None, False)
    assert grade_text("7}.", "7") == Grade(None, False)
