"""SRPO self-localisation (docs/method.md §8.1, arXiv 2605.25507): the model reads the problem and its own
numbered steps and names the first step it cannot justify as ``\\boxed{N}``.

Prompt variants (our wording of the official ``_localize_error``): ``l2`` asserts that the final answer is
wrong (default for failed traces and training), ``neutral`` allows ``\\boxed{0}`` for "no step is wrong"
(default for benchmark runs, where correct traces occur), ``l1`` also reveals the correct answer.
Parsing: the last ``\\boxed{`` holding an integer (0 = no error, 1..n = the step, else fall through), then
the last ``Step N`` in range, then 1; an empty reply gives max(1, n // 2). Which rule read each reply is in the
verdict's evidence (``parsed``), so fallbacks are counted, not silent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.errors import RredcotError
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.settings import setting
from rredcot_viz.traces.answers import find_boxed
from rredcot_viz.traces.needs import missing
from rredcot_viz.types import CallCost

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace

Variant = Literal["l2", "neutral", "l1"]
VARIANTS: tuple[Variant, ...] = get_args(Variant)


@dataclass(frozen=True)
class SelfLocalizeConfig(DetectorConfig):
    variant: Variant = setting("neutral", "SRPO's prompt: l2 (the answer is wrong), neutral (may be right; allows "
                               "'no error') or l1 (with the reference answer)")  # fmt: skip
    temperature: float = setting(0.3, "sampling temperature of the reply", low=0.0, advanced=True)
    top_p: float = setting(0.95, "nucleus sampling mass", low=0.0, high=1.0, advanced=True)
    max_new_tokens: int = setting(256, "longest reply (the official code allows 4096; small models loop rather "
                                  "than reason past this)", low=1, advanced=True)  # fmt: skip
    seed: int = setting(0, "seed of the reply", advanced=True)
    batch_size: int = setting(16, "replies sampled per forward pass", low=1, advanced=True)


def localisation_prompt(question: str, steps: list[str], variant: str, answer: str | None = None) -> str:
    numbered = "\n".join(f"Step {i}: {' '.join(s.replace('</thought>', '').split())}" for i, s in enumerate(steps, 1))
    n = len(steps)
    if variant == "l1":
        return (
            "Below is a problem, a solution written step by step, and the correct answer. The solution's final "
            f"answer is wrong.\n\nProblem: {question}\n\nSolution:\n{numbered}\n\nCorrect answer: {answer}\n\n"
            f"Which step (1 to {n}) contains the first critical error? End your reply with \\boxed{{N}} on its own "
            "line, where N is the step number, and write nothing after it."
        )
    claim = (
        "The final answer of this solution is wrong, so at least one step is wrong."
        if variant == "l2"
        else "The solution may or may not contain a wrong step."
    )
    none = "" if variant == "l2" else " If every step is justified, answer \\boxed{0}."
    return (
        "Your job is to find the first wrong step in your own earlier solution.\n\n"
        f"Problem: {question}\n\nSolution:\n{numbered}\n\n"
        f"{claim} Look for the step where a key decision first went astray (a misreading of the problem, an "
        "assumption made without grounds, or a logical flaw); it can come several steps before the mistake "
        "shows. A step counts as wrong if its claims cannot be backed by the problem statement and the earlier "
        "steps alone.\n\n"
        f"Do not solve the problem again. Name exactly one step number between 1 and {n} and stop at the first "
        "step that cannot be justified." + none + " End your reply with \\boxed{N} on a line of its own, where N "
        "is the step number (not the problem's answer), and write nothing after it."
    )


PARSE_FALLBACKS = ("empty_reply", "default")  # how a reply was read when it named no step: not a real answer


def parse_localisation(reply: str, n: int, allow_none: bool = True) -> int:
    """1-based step, or 0 for "no error" (only when ``allow_none``); docs/method.md's parsing rules."""
    return parse_localisation_detailed(reply, n, allow_none)[0]


def parse_localisation_detailed(reply: str, n: int, allow_none: bool = True) -> tuple[int, str]:
    """``parse_localisation`` and the rule that produced it: ``boxed``, ``boxed_none`` (boxed 0 = no error),
    ``step`` (the last "Step N" in range), or a fallback (``PARSE_FALLBACKS``: an empty reply gives
    max(1, n // 2), a reply naming no step gives 1), so how often the model's reply was not read is known."""
    if not reply.strip():
        return max(1, n // 2), "empty_reply"
    boxes = find_boxed(reply)
    if boxes:
        start, end = boxes[-1]
        content = reply[start:end].strip()
        if re.fullmatch(r"[+-]?\d+", content):
            value = int(content)
            if value == 0:  # "no error"; in training it is clamped to step 1, the empty prefix (docs/method.md)
                return (0 if allow_none else 1), "boxed_none"
            if 1 <= value <= n:
                return value, "boxed"
    for match in reversed(list(re.finditer(r"[Ss]tep\s+(\d+)", reply))):
        if 1 <= int(match.group(1)) <= n:
            return int(match.group(1)), "step"
    return 1, "default"


@detectors.register("self_localize", aliases=("srpo_self",))
class SelfLocalize(Detector):
    name = "self_localize"
    Config = SelfLocalizeConfig
    provenance = "SRPO (arXiv 2605.25507, code Ankur-Samanta/SRPO @ 67f4a26); prompt wording ours"
    uses = ("sampling",)

    def missing(self, trace: Trace) -> list[str]:
        return missing(trace, ("reference_answer",) if self.config.variant == "l1" else ())

    def mode(self, trace: Trace) -> str:
        return self.config.variant

    def locate(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        verdict = self.detect_many(analyzer, [trace], segmenter, progress)[0]
        if isinstance(verdict, Exception):
            raise verdict
        return verdict

    def detect_many(
        self, analyzer: Analyzer, traces: list[Trace], segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> list[FirstError | RredcotError]:
        """All localisation prompts sampled in batches (one seeded generation per trace)."""
        lm = analyzer.lm
        steps = [[s.text for s in self.segmentation(analyzer, t, segmenter).segments] for t in traces]
        prompts = [self.prompt_ids(lm, t.question, s, t.reference_answer) for t, s in zip(traces, steps, strict=True)]
        config = SamplingConfig(
            self.config.temperature, self.config.top_p, 0, self.config.max_new_tokens, (), False, self.config.batch_size
        )
        result = analyzer.sampler.sample(prompts, [self.config.seed] * len(prompts), config, progress=progress)
        verdicts: list[FirstError | RredcotError] = []
        for generation, trace_steps in zip(result.generations, steps, strict=True):
            step, parsed = parse_localisation_detailed(
                generation.text, len(trace_steps), allow_none=self.config.variant == "neutral"
            )
            scores = np.zeros(len(trace_steps))
            if step:
                scores[step - 1] = 1.0
            evidence = {"reply": generation.text, "step": step, "parsed": parsed}
            cost = CallCost(tokens_generated=len(generation.token_ids))
            verdicts.append(
                FirstError(self.name, NO_ERROR if step == 0 else step - 1, scores, evidence=evidence, cost=cost)
            )
        return verdicts

    def prompt_ids(self, lm: LanguageModel, question: str, steps: list[str], answer: str | None) -> list[int]:
        prompt = localisation_prompt(question, steps, self.config.variant, answer)
        text = lm.format_prompt(prompt, system=None) if lm.has_chat_template else prompt
        return lm.encode_prompt(text)
