"""Reset resampling (docs/method.md §9, RRPO/SRPO arXiv 2605.25507): keep the clean prefix before a chosen
segment h, sample G suffixes from it, and check their answers.

The reset state is x* = s_h (segments 1..h-1 kept); h comes from the user, from a detector's verdict (SRPO:
the self-localised step), or uniformly from 1..K (RRPO). Suffixes are Monte Carlo rollouts from that state,
so they are seeded, stored and reused like every other rollout. ``edit_segment`` replaces one segment by
hand (an off-policy intervention), re-scores the trace and samples on-policy continuations after the edit,
so both kinds of counterfactual can be shown side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rredcot_viz.diagnosis.base import Detector
from rredcot_viz.engine.analyzer import AnalysisResult, Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.estimators.montecarlo import MonteCarloEstimator
from rredcot_viz.model.meter import measure
from rredcot_viz.segmenters import steps_segmenter
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.settings import Settings, setting
from rredcot_viz.stats import bootstrap_mean, wilson_interval
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost, Rollout


@dataclass(frozen=True)
class ResetConfig(Settings):
    suffixes: int = setting(4, "suffixes G sampled after the kept prefix", low=1)
    temperature: float = setting(0.7, "sampling temperature", low=0.0)
    top_p: float = setting(0.95, "nucleus sampling mass", low=0.0, high=1.0, advanced=True)
    max_new_tokens: int = setting(256, "token cap per suffix", low=1)
    seed: int = setting(0, "seed of the suffixes (suffix i always gets the same one)")

    def sampler(self) -> MonteCarloEstimator:
        return MonteCarloEstimator(
            rollouts=self.suffixes,
            temperature=self.temperature,
            top_p=self.top_p,
            max_new_tokens=self.max_new_tokens,
            seed=self.seed,
        )


@dataclass
class ResetResult:
    segment: int  # 1-based reset step h: segments 1..h-1 are kept
    k: int
    source: str  # "user", "random" (RRPO), or "detector:<name>" (SRPO with self_localize)
    prefix_text: str
    suffixes: list[Rollout]
    cost: CallCost = field(default_factory=CallCost)

    @property
    def position(self) -> float:
        """The reset point as a share of the trace, 0 = from the question alone."""
        return (self.segment - 1) / self.k

    @property
    def successes(self) -> int:
        return sum(r.correct for r in self.suffixes)

    @property
    def rate(self) -> float:
        return self.successes / len(self.suffixes)

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.successes, len(self.suffixes))

    @property
    def corrected(self) -> bool:
        return self.successes > 0


def reset_resample(
    analyzer: Analyzer,
    trace: Trace,
    segmenter: Segmenter,
    segment: int,
    config: ResetConfig | None = None,
    source: str = "user",
    progress: Any = None,
) -> ResetResult:
    """G suffixes sampled from the state before segment ``segment`` (1-based)."""
    config = config or ResetConfig()
    context = analyzer.context(trace)
    context.score_stats()  # entropies for the segmenter
    segmentation = analyzer.segment(trace, segmenter)
    if not 1 <= segment <= segmentation.k:
        raise ConfigError(f"reset segment must be in 1..{segmentation.k}, got {segment}")
    sampler = config.sampler()
    sampler.check(trace)
    prefix = segmentation.state_prefixes[segment - 1]
    with measure() as spent:
        sampler.draw(context, {prefix: config.suffixes}, progress)
    suffixes = sampler.rollouts(context, prefix)[: config.suffixes]
    prefix_text = "".join(s.text for s in segmentation.segments[: segment - 1])
    return ResetResult(segment, segmentation.k, source, prefix_text, suffixes, spent.cost)


def random_reset_step(k: int, rng: np.random.Generator) -> int:
    """RRPO's reset: a step drawn uniformly from 1..K (``random.randint(1, n_steps)``)."""
    return int(rng.integers(1, k + 1))


def detector_reset_step(analyzer: Analyzer, trace: Trace, segmenter: Segmenter, detector: Detector) -> int:
    """SRPO's reset: the detector's first wrong step, clamped to 1..K ("no error" resets from the question)."""
    verdict = detector.detect(analyzer, trace, segmenter)
    return max(1, verdict.prediction + 1)


@dataclass
class ResetComparison:
    """RRPO vs SRPO-style resets on a set of failed traces."""

    results: dict[str, list[ResetResult]]

    def summary(self) -> dict[str, dict[str, Any]]:
        table = {}
        for name, results in self.results.items():
            corrected = sum(r.corrected for r in results)
            rates = np.array([r.rate for r in results])
            low, high = bootstrap_mean(rates)
            table[name] = {
                "traces": len(results),
                "corrected_any_of_G": corrected / len(results) if results else float("nan"),
                "corrected_interval": wilson_interval(corrected, len(results)),
                "mean_success": float(rates.mean()) if len(rates) else float("nan"),
                "mean_success_interval": (low, high),
                "positions": [r.position for r in results],
            }
        return table


def compare_resets(
    analyzer: Analyzer,
    traces: list[Trace],
    segmenter: Segmenter,
    detector: Detector,
    config: ResetConfig | None = None,
    seed: int = 0,
    progress: Any = None,
) -> ResetComparison:
    """For every failed trace: one random reset (RRPO) and one detector reset (SRPO), G suffixes each."""
    failed = [t for t in traces if t.outcome == 0.0]
    if not failed:
        raise ConfigError("reset resampling compares corrections of failed traces; none of these traces failed")
    rng = np.random.default_rng(seed)
    results: dict[str, list[ResetResult]] = {"rrpo_random": [], f"srpo_{detector.name}": []}
    for done, trace in enumerate(failed, start=1):
        analyzer.context(trace).score_stats()  # entropies for the segmenter
        k = analyzer.segment(trace, segmenter).k
        random_step = random_reset_step(k, rng)
        results["rrpo_random"].append(reset_resample(analyzer, trace, segmenter, random_step, config, "random"))
        step = detector_reset_step(analyzer, trace, segmenter, detector)
        results[f"srpo_{detector.name}"].append(
            reset_resample(analyzer, trace, segmenter, step, config, f"detector:{detector.name}")
        )
        if progress:
            progress(done, len(failed))
    return ResetComparison(results)


@dataclass
class EditResult:
    original: AnalysisResult
    edited: AnalysisResult
    edited_trace: Trace
    segment: int
    continuations: list[Rollout]


def edit_segment(
    analyzer: Analyzer,
    trace: Trace,
    segmenter: Segmenter,
    segment: int,
    new_text: str,
    estimator: ValueEstimator,
    config: ResetConfig | None = None,
) -> EditResult:
    """Replace segment ``segment`` (1-based) by ``new_text`` (off-policy), re-score the edited trace with
    ``estimator`` on the same segments, and sample G on-policy continuations right after the edit."""
    if not new_text.strip():
        raise ConfigError("the replacement text of a segment must not be empty")
    original = analyzer.analyze(trace, segmenter, estimator)
    segments = original.segmentation.segments
    if not 1 <= segment <= len(segments):
        raise ConfigError(f"segment must be in 1..{len(segments)}, got {segment}")
    texts = [s.text for s in segments]
    texts[segment - 1] = new_text
    answer = trace.cot[segments[-1].char_span[1] :]
    steps = (*texts[:-1], texts[-1] + answer)
    edited_trace = trace.with_changes(
        cot="".join(steps),
        steps=steps,
        first_error=None,
        step_labels=None,
        step_values={},
        step_scores={},
        correct=None,
        final_answer=None,
        source="edited",
        metadata={**trace.metadata, "edited_segment": segment},
    )
    edited = analyzer.analyze(edited_trace, steps_segmenter(), estimator)
    config = config or ResetConfig()
    sampler = config.sampler()
    context = analyzer.context(edited_trace)
    prefix = edited.segmentation.state_prefixes[segment]
    sampler.draw(context, {prefix: config.suffixes})
    return EditResult(original, edited, edited_trace, segment, sampler.rollouts(context, prefix)[: config.suffixes])
