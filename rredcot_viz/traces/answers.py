r"""Final-answer extraction and answer equivalence.

Extraction tries, in order: the last non-empty ``\boxed{...}`` (nested braces balanced); else the latest of
"the (final) answer is ...", a GSM8K ``#### ...`` line, an ``A: ...`` line (GSM8K model solutions) and a
PRM800K ``# Answer`` heading; and finally the last number in the text. Equivalence compares numbers exactly as
fractions when both sides parse as numbers (commas, currency, units, percent, ``\frac``, mixed numbers), otherwise
normalised strings.

>>> extract_answer(r"so $x = \boxed{\frac{1}{2}}$.")
'\\frac{1}{2}'
>>> answers_equivalent("$1,200.00", "1200")
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

_ANSWER_IS = re.compile(r"(?:the\s+)?(?:final\s+)?answer\s*(?:is|:|=)\s*:?\s*(?P<ans>[^\n]+)", flags=re.IGNORECASE)
_GSM8K = re.compile(r"^\s*####\s*(?P<ans>.+?)\s*$", flags=re.MULTILINE)
_A_LINE = re.compile(r"^\s*A:\s*(?P<ans>.+?)\s*$", flags=re.MULTILINE)
_ANSWER_HEADING = re.compile(r"^#+[ \t]*Answer[ \t]*\n\s*(?P<ans>[^\n]+?)\s*$", flags=re.MULTILINE)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")


@dataclass(frozen=True)
class ExtractedAnswer:
    text: str
    method: str  # boxed | answer_is | gsm8k | a_line | answer_heading | last_number
    start: int  # character offset of the answer in the source text


def find_boxed(text: str) -> list[tuple[int, int]]:
    r"""(start, end) of the contents of every ``\boxed{...}`` / ``\fbox{...}`` with balanced braces."""
    spans = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, index = 1, match.end()
        while index < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            index += 1
        if depth == 0:
            spans.append((match.end(), index - 1))
    return spans


def extract_answer_detailed(text: str) -> ExtractedAnswer | None:
    """The final answer of a response and how it was found, or None when the text has no answer at all."""
    if not text:
        return None
    boxed = [(start, end) for start, end in find_boxed(text) if text[start:end].strip()]
    if boxed:
        start, end = boxed[-1]
        return ExtractedAnswer(text[start:end].strip(), "boxed", start)
    candidates = []
    patterns = (("answer_is", _ANSWER_IS), ("gsm8k", _GSM8K), ("a_line", _A_LINE), ("answer_heading", _ANSWER_HEADING))
    for method, pattern in patterns:
        last = _last_match(pattern, text)
        if last is not None:
            candidates.append((last.start("ans"), method, _trim_sentence(last.group("ans"))))
    candidates = [c for c in candidates if c[2]]
    if candidates:
        start, method, answer = max(candidates)
        return ExtractedAnswer(answer, method, start)
    numbers = list(_NUMBER.finditer(text))
    if numbers:
        last = numbers[-1]
        return ExtractedAnswer(last.group().rstrip(".,"), "last_number", last.start())
    return None


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The match starting last, overlaps allowed: in "Final Answer: The final answer is $7$" a
    non-overlapping scan would swallow the second "answer is" into the first capture."""
    last, position = None, 0
    while (match := pattern.search(text, position)) is not None:
        last, position = match, match.start() + 1
    return last


def extract_answer(text: str) -> str | None:
    found = extract_answer_detailed(text)
    return found.text if found else None


GRADING = "prefix+rollout"  # what a sampled continuation is graded on; results that depend on it name it in their keys


@dataclass(frozen=True)
class Grade:
    answer: str | None  # the answer the text states explicitly; None when it states none
    correct: bool


def grade_text(text: str, reference: str | None) -> Grade:
    """The one grader of sampled text (Monte Carlo rollouts, resets, the trainer's reward): the answer the whole
    response states explicitly (boxed, "the answer is", ####, "A:"; never a stray last number), against the
    reference. A continuation is graded on the state's text plus the rollout (``text = state + rollout``), the
    way the finished response would be: "... The answer is" + " 7." states 7, and a rollout that corrects an
    answer already written counts with its own, the later one."""
    found = extract_answer_detailed(text)
    answer = found.text if found is not None and found.method != "last_number" else None
    return Grade(answer, answers_equivalent(answer, reference))


def last_number_note(text: str) -> str | None:
    """A note for results that read ``text``'s own answer, when that answer is only its last number (the text
    states none explicitly), so the fallback is shown; None when the answer is stated."""
    found = extract_answer_detailed(text)
    if found is None or found.method != "last_number":
        return None
    return f"the trace's own answer {found.text!r} is its last number: the response states no answer explicitly"


def _trim_sentence(answer: str) -> str:
    """Cut an "answer is ..." capture at the end of its sentence, keeping decimals like 3.5 intact."""
    answer = answer.strip()
    match = re.search(r"(?<!\d)\.(?!\d)|\.(?=\s|$)", answer)
    if match:
        answer = answer[: match.start()]
    return answer.strip().strip("*").strip()


_LATEX_WRAPPERS = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
_UNIT_WORDS = re.compile(
    r"\b(?:dollars?|cents?|units?|meters?|metres?|cm|km|kg|grams?|g|miles?|mph|hours?|hrs?|minutes?|mins?|"
    r"seconds?|secs?|days?|weeks?|months?|years?|inches|inch|feet|foot|ft|pounds?|lbs?|degrees?|people|"
    r"apples?|eggs?|students?|points?|cookies?|marbles?|boxes|box|pages?|liters?|litres?|ml|percent)\b\.?",
    flags=re.IGNORECASE,
)


def normalize_answer(answer: str) -> str:
    r"""A canonical string form: no ``$``, ``\left``/``\right``, text wrappers, spaces, trailing period;
    ``\dfrac`` -> ``\frac``; a leading ``x =`` dropped; thousands separators removed from numbers."""
    text = _unwrap_boxed(answer)
    text = text.replace("\\!", "").replace("\\,", "").replace("\\;", "").replace("\\ ", "")
    text = text.replace("\\left", "").replace("\\right", "").replace("\\displaystyle", "")
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = text.replace("^\\circ", "").replace("^{\\circ}", "")
    for _ in range(3):
        text = _LATEX_WRAPPERS.sub(r"\1", text)
    text = re.sub(r"\\sqrt\s*(\w)", r"\\sqrt{\1}", text)
    text = re.sub(r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", text)
    text = text.replace("\\$", "").replace("$", "").replace("\\%", "%").strip()
    text = re.sub(r"^[a-zA-Z]\s*=\s*(?=\S)", "", text)  # "x = 5" -> "5"
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\s+", "", text)
    return text.rstrip(".").lower()


def parse_number(answer: str) -> Fraction | None:
    r"""The exact value of an answer that is a single number, else None.

    Accepts ``1,234``, ``$18``, ``18 dollars``, ``-1.0``, ``3/4``, ``\frac{3}{4}``, ``\dfrac34``, ``2\frac{1}{2}``
    (mixed number, also ``3\dfrac12`` and ``1 1/2``), ``-\frac{1}{2}``, ``\$18``, ``50%`` (read as 50, since
    datasets write percentages either way), ``1.5e3``, ``10^\circ``.
    """
    text = _unwrap_boxed(answer)
    text = text.replace("\\$", "").replace("$", "").replace("\\%", "").replace("%", "")
    text = text.replace("\\left", "").replace("\\right", "").replace("\\!", "").replace("\\,", "")
    text = text.replace("^\\circ", "").replace("^{\\circ}", "")
    for _ in range(3):
        text = _LATEX_WRAPPERS.sub(r"\1", text)
    text = _UNIT_WORDS.sub("", text)
    text = re.sub(r"^[a-zA-Z]\s*=\s*", "", text.strip())
    text = text.strip().rstrip(".").strip()
    # Braces first, so that "3\dfrac12" is the mixed number 3 1/2 and not 31/2.
    text = _FRAC_SHORT.sub(r"\\frac{\1}{\2}", text)
    mixed = re.fullmatch(r"(-?)(\d+)(?:\s*\\[dt]?frac\s*\{(\d+)\}\s*\{(\d+)\}|\s+(\d+)\s*/\s*(\d+))", text)
    if mixed:
        sign, whole = mixed.group(1), int(mixed.group(2))
        num, den = (int(g) for g in (mixed.group(3, 4) if mixed.group(3) is not None else mixed.group(5, 6)))
        if den == 0:
            return None
        return (-1 if sign else 1) * (whole + Fraction(num, den))
    text = _FRAC.sub(r"(\1)/(\2)", text)
    text = re.sub(r"\s+", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}(?:\D|$))", "", text)
    match = re.fullmatch(r"(-?)\(?(-?[\d.]+(?:e-?\d+)?)\)?(?:/\(?(-?[\d.]+)\)?)?", text)
    if not match:
        return None
    try:
        value = Fraction(match.group(2))
        if match.group(3) is not None:
            denominator = Fraction(match.group(3))
            if denominator == 0:
                return None
            value /= denominator
    except (ValueError, ZeroDivisionError):
        return None
    return -value if match.group(1) else value


def _unwrap_boxed(answer: str) -> str:
    r"""``\boxed{5}`` -> ``5``: an answer given with its box still around it."""
    text = answer.strip()
    spans = find_boxed(text)
    if spans and re.match(r"\\(?:boxed|fbox)\s*\{", text) and spans[0][1] == len(text) - 1:
        return text[spans[0][0] : spans[0][1]].strip()
    return text


def answers_equivalent(predicted: str | None, reference: str | None) -> bool:
    """True when two answers denote the same value (numerically when both are numbers)."""
    if predicted is None or reference is None:
        return False
    left, right = parse_number(predicted), parse_number(reference)
    if left is not None and right is not None:
        return left == right
    return normalize_answer(predicted) == normalize_answer(reference) != ""


def numbers_in(text: str) -> list[str]:
    """Distinct numbers in order of first appearance (commas dropped): the candidate answers that
    ``candidate_normalized`` aggregation renormalises over."""
    seen: dict[str, None] = {}
    for match in _NUMBER.finditer(text):
        number = match.group().replace(",", "").rstrip(".")
        if number and number not in ("-", "."):
            seen.setdefault(number, None)
    return list(seen)
