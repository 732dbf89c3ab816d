"""``step_verifier`` detector: the loaded model as a generative process reward model. For each step t it reads
the problem and steps 1..t and is asked whether step t is correct; the verdict is p(Yes) / (p(Yes) + p(No))
of its first reply token under a fixed prompt (our wording; cf. ProcessBench's critic prompt and generative
PRMs). The first step with p(Yes) below ``threshold`` is the first error, -1 when every step passes.

It needs nothing but the steps (no reference answer, solution or outcome), so every step-labelled file has at
least one model-based detector. All K questions of a trace are scored in one pass that shares the
problem-and-steps prefix (``LanguageModel.score_continuations``), so a trace costs about one forward pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.diagnosis.processbench import score
from rredcot_viz.errors import ConfigError
from rredcot_viz.model.packing import Continuation
from rredcot_viz.settings import setting

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace

INSTRUCTION = (
    "Below is a math problem and the beginning of a step-by-step solution. Check only the last step shown: "
    "it is correct if its calculations are right and it follows from the problem and the earlier steps."
)
QUESTION = "\n\nIs Step {t} correct? Answer Yes or No."
_SLOT = "\u0000SLOT\u0000"


@dataclass(frozen=True)
class StepVerifierConfig(DetectorConfig):
    threshold: float = setting(0.5, "a step fails when p(Yes) / (p(Yes) + p(No)) is below this, in (0, 1)",
                               low=0.0, high=1.0)  # fmt: skip
    yes: str = setting("Yes", "the reply that means the step is correct", advanced=True)
    no: str = setting("No", "the reply that means it is not", advanced=True)
    chat_template: bool = setting(True, "ask through the model's chat template", advanced=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.threshold in (0.0, 1.0):  # the open ends the range cannot express
            raise ConfigError(f"threshold must be in (0, 1), got {self.threshold}")
        if not self.yes.strip() or not self.no.strip() or self.yes == self.no:
            raise ConfigError(f"yes and no must be two different non-empty words, got {self.yes!r}, {self.no!r}")


def step_line(index: int, text: str) -> str:
    """``Step t: text`` on one line (newlines inside a step would read as new steps)."""
    return f"Step {index}: {' '.join(text.replace('</thought>', '').split())}\n"


def prompt_frame(lm: LanguageModel, chat: bool) -> tuple[str, str]:
    """The text before and after the user message (the chat template's user turn and assistant header)."""
    framed = lm.format_prompt(_SLOT, system=None, chat=chat)
    head, _, tail = framed.partition(_SLOT)
    return head, tail


@dataclass
class VerifierPrompts:
    """One token sequence holding the problem and every step, and for each step t the cut after step t with
    the question about it (scored: the Yes and No replies)."""

    ids: list[int]
    requests: list[Continuation]  # 2 per step: yes, then no


def verifier_prompts(lm: LanguageModel, question: str, steps: list[str], config: StepVerifierConfig) -> VerifierPrompts:
    head, tail = prompt_frame(lm, config.chat_template)
    ids = lm.encode_prompt(f"{head}{INSTRUCTION}\n\nProblem: {' '.join(question.split())}\n\nSolution so far:\n")
    yes, no = tuple(lm.encode(config.yes)), tuple(lm.encode(config.no))
    requests: list[Continuation] = []
    for t, text in enumerate(steps, start=1):
        ids += lm.encode(step_line(t, text))
        context = tuple(lm.encode(QUESTION.format(t=t) + tail))
        requests += [Continuation(len(ids), context, yes), Continuation(len(ids), context, no)]
    return VerifierPrompts(ids, requests)


@detectors.register("step_verifier", aliases=("verifier",))
class StepVerifier(Detector):
    name = "step_verifier"
    Config = StepVerifierConfig
    provenance = "design choice (configurable): generative-PRM reading of the loaded model; prompt ours"

    def mode(self, trace: Trace) -> str | None:
        """Tables name a non-default (e.g. calibrated) threshold: ``step_verifier[threshold 0.265]``."""
        default = StepVerifierConfig.threshold
        return None if self.config.threshold == default else f"threshold {self.config.threshold:.3f}"

    def locate(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        steps = [s.text for s in self.segmentation(analyzer, trace, segmenter).segments]
        prompts = verifier_prompts(analyzer.lm, trace.question, steps, self.config)
        scores = analyzer.lm.score_continuations(
            prompts.ids, prompts.requests, progress=progress, operation="step_verifier"
        )
        p_yes = yes_probability([lp.sum() for lp in scores.logprobs[0::2]], [lp.sum() for lp in scores.logprobs[1::2]])
        prediction = first_below(p_yes, self.config.threshold)
        evidence = {"p_yes": p_yes.tolist()}
        return FirstError(self.name, prediction, 1.0 - p_yes, evidence=evidence, cost=scores.cost)


def yes_probability(yes_logprobs: list[float], no_logprobs: list[float]) -> np.ndarray:
    """p(Yes) / (p(Yes) + p(No)) per step, computed stably from the two log-probs.

    >>> yes_probability([np.log(0.3)], [np.log(0.1)]).round(4).tolist()
    [0.75]"""
    yes, no = np.asarray(yes_logprobs, dtype=float), np.asarray(no_logprobs, dtype=float)
    return 1.0 / (1.0 + np.exp(no - yes))


def first_below(p_yes: np.ndarray, threshold: float) -> int:
    """The first step whose p(Yes) is below ``threshold``; -1 ("no error") when none is."""
    failing = np.flatnonzero(np.asarray(p_yes) < threshold)
    return int(failing[0]) if len(failing) else NO_ERROR


def calibrate_threshold(p_yes: list[np.ndarray], labels: list[int]) -> tuple[float, float]:
    """The threshold with the best ProcessBench F1 on labelled traces (candidates: midpoints between the observed
    p(Yes) values) and that F1. Choose it on one split and apply it to another: on the same split it is
    optimistic by construction."""
    observed = np.unique(np.concatenate([np.asarray(p, dtype=float) for p in p_yes]))
    candidates = [*(observed[:-1] + observed[1:]) / 2, float(observed[-1]) + 1e-9]
    best = (0.5, -1.0)
    for threshold in candidates:
        f1 = score("calibration", [first_below(p, threshold) for p in p_yes], labels).f1
        if f1 is not None and f1 > best[1]:
            best = (float(threshold), f1)
    return best
