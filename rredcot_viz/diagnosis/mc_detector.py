"""``mc`` detector (METHOD.md §8.1, OmegaPRM arXiv 2406.06592): the first boundary whose Monte Carlo
success rate drops to ``threshold`` or below (default: to 0, OmegaPRM's "correct while MC > 0"). With
``binary_search`` it probes O(log K) states instead of all K, assuming monotonicity; MC(s_{K+1}) := R.
If the policy cannot solve the question at all (MC(s_1) at or below the threshold) it abstains."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators.montecarlo import MonteCarloEstimator, rollout_seed

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.lm import ProgressFn
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace


@dataclass(frozen=True)
class MonteCarloDetectorConfig(DetectorConfig):
    rollouts: int = 4  # M per probe (METHOD.md suggests 8; 4 keeps a 400-trace CPU run under an hour)
    max_new_tokens: int = 128
    temperature: float = 0.7
    threshold: float = 0.0  # a state "fails" when its success rate is <= threshold
    binary_search: bool = True
    seed: int = 0


@detectors.register("mc", aliases=("mc_binary_search",))
class MonteCarloDetector(Detector):
    name = "mc"
    Config = MonteCarloDetectorConfig
    provenance = "OmegaPRM binary search (arXiv 2406.06592); Math-Shepherd-style MC labels"

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
        contexts = [analyzer.context(t) for t in traces if t.reference_answer and t.outcome is not None]
        missing = [(c, i) for c in contexts for i in range(len(estimator.rollouts(c, 0)), self.config.rollouts)]
        if missing:
            prompts = [c.prompt_ids for c, _ in missing]
            seeds = [rollout_seed(self.config.seed, 0, i) for _, i in missing]
            generations = analyzer.lm.sample(prompts, seeds, estimator.sampling()).generations
            for (context, index), generation in zip(missing, generations, strict=True):
                rollout = estimator.grade(context, 0, index, generation)
                context.cache.put_rollouts(context.key, estimator.sampling_key(context), [rollout])
        return super().detect_many(analyzer, traces, segmenter, progress)

    def detect(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        segmentation = self.segmentation(analyzer, trace, segmenter)
        context = analyzer.context(trace)
        config = self.config
        estimator = self.estimator()
        estimator.check(trace)
        prefixes = segmentation.state_prefixes
        k = segmentation.k
        before = analyzer.lm.meter.total
        probed: dict[int, float] = {k: float(trace.outcome)}  # state index (0-based) -> success rate

        def value(state: int) -> float:
            if state not in probed:
                estimator.draw(context, {prefixes[state]: config.rollouts})
                drawn = estimator.rollouts(context, prefixes[state])[: config.rollouts]
                probed[state] = sum(r.correct for r in drawn) / len(drawn)
                if progress:
                    progress(len(probed), k + 1)
            return probed[state]

        fails = lambda state: value(state) <= config.threshold  # noqa: E731
        if fails(0):
            return self._result(NO_ERROR, probed, k, abstained=True, before=before, analyzer=analyzer)
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
        return self._result(prediction, probed, k, abstained=False, before=before, analyzer=analyzer)

    def _result(
        self, prediction: int, probed: dict[int, float], k: int, abstained: bool, before, analyzer
    ) -> FirstError:
        values = np.full(k + 1, np.nan)
        for state, rate in probed.items():
            values[state] = rate
        drops = np.nan_to_num(values[:-1] - values[1:], nan=0.0)
        evidence = {"probed_states": sorted(probed), "values": [None if np.isnan(v) else v for v in values]}
        return FirstError(self.name, prediction, drops, abstained, evidence, analyzer.lm.meter.total - before)
