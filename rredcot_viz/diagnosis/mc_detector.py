"""``mc`` detector (docs/method.md §8.1, OmegaPRM arXiv 2406.06592): the first boundary whose Monte Carlo
success rate drops to ``threshold`` or below (default: to 0, OmegaPRM's "correct while MC > 0"). With
``binary_search`` it probes O(log K) states instead of all K, assuming monotonicity; MC(s_{K+1}) := R.
If the policy cannot solve the question at all (MC(s_1) at or below the threshold) it abstains.

``reward`` says what a continuation's success is: agreement with the reference answer (``reference``), or,
for data with no reference answer, with the majority answer of the continuations sampled from the question
(``self_consistency``; the trace's own terminal reward is then its agreement with that majority). ``auto``
(default) takes the reference where the trace has one."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators.montecarlo import MonteCarloEstimator, rollout_seed
from rredcot_viz.settings import setting
from rredcot_viz.traces.answers import answers_equivalent, normalize_answer, parse_number
from rredcot_viz.traces.needs import missing

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace


Reward = Literal["auto", "reference", "self_consistency"]
REWARDS: tuple[Reward, ...] = get_args(Reward)


@dataclass(frozen=True)
class MonteCarloDetectorConfig(DetectorConfig):
    rollouts: int = setting(4, "rollouts M per probed state (docs/method.md suggests 8; 4 keeps a 400-trace CPU run "
                            "under an hour)", low=1)  # fmt: skip
    max_new_tokens: int = setting(128, "token cap per rollout", low=1)
    temperature: float = setting(0.7, "sampling temperature", low=0.0, advanced=True)
    threshold: float = setting(0.0, "a state fails when its success rate is at most this", low=0.0, high=1.0,
                               advanced=True)  # fmt: skip
    binary_search: bool = setting(True, "OmegaPRM binary search (else every state is probed)", advanced=True)
    seed: int = setting(0, "seed of the rollouts", advanced=True)
    reward: Reward = setting("auto", "a rollout succeeds when it reaches the reference answer, or agrees with the "
                             "majority of rollouts from the question (auto: reference when the trace has "
                             "one)")  # fmt: skip


@detectors.register("mc", aliases=("mc_binary_search",))
class MonteCarloDetector(Detector):
    name = "mc"
    Config = MonteCarloDetectorConfig
    provenance = "OmegaPRM binary search (arXiv 2406.06592); Math-Shepherd-style MC labels"
    uses = ("sampling",)

    def mode(self, trace: Trace) -> str:
        if self.config.reward != "auto":
            return self.config.reward
        return "reference" if trace.reference_answer else "self_consistency"

    def missing(self, trace: Trace) -> list[str]:
        return missing(trace, ("reference_answer", "outcome") if self.mode(trace) == "reference" else ())

    def estimator(self) -> MonteCarloEstimator:
        config = self.config
        return MonteCarloEstimator(
            rollouts=config.rollouts,
            max_new_tokens=config.max_new_tokens,
            temperature=config.temperature,
            seed=config.seed,
            batch_size=16,
        )

    def detect_many(
        self, analyzer: Analyzer, traces: list[Trace], segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> list[FirstError | RredcotError]:
        """First the question-only probe of every trace, sampled in batches across traces (on small models most
        traces abstain there), then the per-trace binary search over the rest."""
        estimator = self.estimator()
        contexts = [analyzer.context(t) for t in traces]
        todo = [(c, i) for c in contexts for i in range(len(estimator.rollouts(c, 0)), self.config.rollouts)]
        if todo:
            prompts = [c.prompt_ids for c, _ in todo]
            seeds = [rollout_seed(self.config.seed, 0, i) for _, i in todo]
            generations = analyzer.sampler.sample(prompts, seeds, estimator.sampling()).generations
            for (context, index), generation in zip(todo, generations, strict=True):
                rollout = estimator.grade(context, 0, index, generation)
                context.cache.put_rollouts(context.key, estimator.sampling_key(context), [rollout])
        return super().detect_many(analyzer, traces, segmenter, progress)

    def consensus_trace(self, analyzer: Analyzer, trace: Trace) -> Trace | None:
        """``trace`` with the majority answer of the question-level continuations as its reference (their
        grades moved over, so nothing is sampled twice), or None when none of them states an answer."""
        estimator = self.estimator()
        context = analyzer.context(trace)
        if len(estimator.rollouts(context, 0)) < self.config.rollouts:
            estimator.draw(context, {0: self.config.rollouts})
        drawn = estimator.rollouts(context, 0)[: self.config.rollouts]
        majority = majority_answer([r.answer for r in drawn])
        if majority is None:
            return None
        stated = trace.answer is not None and answers_equivalent(trace.answer, majority)
        pseudo = trace.with_changes(reference_answer=majority, reference_solution=None, correct=stated)
        target = analyzer.context(pseudo)
        # graded against the majority on read (``MonteCarloEstimator.rollouts``)
        target.cache.put_rollouts(target.key, estimator.sampling_key(target), drawn)
        return pseudo

    def locate(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        self.check(trace)
        mode = self.mode(trace)
        if mode == "self_consistency":
            consensus = self.consensus_trace(analyzer, trace)
            if consensus is None:
                k = self.segmentation(analyzer, trace, segmenter).k
                evidence = {"reward": mode, "reason": "no continuation from the question states an answer"}
                return FirstError(self.name, NO_ERROR, np.zeros(k), True, evidence)
            trace = consensus
        segmentation = self.segmentation(analyzer, trace, segmenter)
        context = analyzer.context(trace)
        config = self.config
        estimator = self.estimator()
        estimator.check(trace)
        prefixes = segmentation.state_prefixes
        k = segmentation.k
        probed: dict[int, float] = {k: float(trace.outcome)}  # state index (0-based) -> success rate
        halves: dict[int, list[float]] = {k: [float(trace.outcome)] * 2}  # two disjoint halves' rates (trust)

        def value(state: int) -> float:
            if state not in probed:
                estimator.draw(context, {prefixes[state]: config.rollouts})
                drawn = estimator.rollouts(context, prefixes[state])[: config.rollouts]
                probed[state] = sum(r.correct for r in drawn) / len(drawn)
                half = len(drawn) // 2
                halves[state] = [float(np.mean([r.correct for r in part])) if half else float("nan")
                                 for part in (drawn[:half], drawn[half : 2 * half])]  # fmt: skip
                if progress:
                    progress(len(probed), k + 1)
            return probed[state]

        fails = lambda state: value(state) <= config.threshold  # noqa: E731
        extra = {"reward": mode, "consensus": trace.reference_answer if mode == "self_consistency" else None}
        extra |= {"half_values": halves, "rollouts": config.rollouts}  # halves listed by state in ``_result``
        if fails(0):
            return self._result(NO_ERROR, probed, k, True, extra)
        if config.binary_search:
            low, high = 1, k  # 1-based segments: find the first t with MC(s_{t+1}) failing
            while low < high:
                middle = (low + high) // 2
                if fails(middle):
                    high = middle
                else:
                    low = middle + 1
            prediction = low - 1 if fails(low) else NO_ERROR
        else:
            failing = [t for t in range(1, k + 1) if fails(t)]
            prediction = failing[0] - 1 if failing else NO_ERROR
        return self._result(prediction, probed, k, False, extra)

    def _result(self, prediction: int, probed: dict[int, float], k: int, abstained: bool, extra: dict) -> FirstError:
        values = np.full(k + 1, np.nan)
        for state, rate in probed.items():
            values[state] = rate
        drops = np.nan_to_num(values[:-1] - values[1:], nan=0.0)
        evidence = {"probed_states": sorted(probed), "values": [None if np.isnan(v) else v for v in values], **extra}
        if "half_values" in extra:  # per state (None where not probed), as JSON keeps it
            evidence["half_values"] = [extra["half_values"].get(state) for state in range(k + 1)]
        return FirstError(self.name, prediction, drops, abstained, evidence)


def majority_answer(answers: list[str | None]) -> str | None:
    """The most frequent stated answer (equivalent forms counted together; ties go to the earliest), or None."""
    stated = [a for a in answers if a]
    if not stated:
        return None
    counts = Counter(_answer_key(a) for a in stated)
    best = max(counts.values())
    return next(a for a in stated if counts[_answer_key(a)] == best)


def _answer_key(answer: str) -> str:
    """Equal for answers that ``answers_equivalent`` would match (numbers by value)."""
    number = parse_number(answer)
    return f"number:{number}" if number is not None else normalize_answer(answer)
