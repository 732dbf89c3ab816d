"""Detectors that read a value curve (docs/method.md §8.1): ``min_sigma`` and ``value_drop``.

With ``estimator="auto"`` (default) each trace gets the richest estimator it can feed: ``rredcot`` with a
reference answer and solution, ``answer_only`` (R-hat alone, beta = 0) with a reference answer only, and
``own_answer`` with neither (the probability of the trace's own answer; on a failed trace the value falls where
support for its wrong answer rises). Any registered estimator can be named instead (``mc`` gives the MC
value-drop detector). Tables name the estimator used, e.g. ``min_sigma[answer_only]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.estimators import auto_estimators, estimators
from rredcot_viz.settings import setting

if TYPE_CHECKING:
    from rredcot_viz.engine.analyzer import Analyzer
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.segmenters.base import Segmenter
    from rredcot_viz.traces.trace import Trace


def _estimator_choices() -> list[str]:
    return ["auto", *estimators.names()]


def estimator_setting() -> Any:
    return setting("auto", "the value curve's estimator (auto: rredcot, answer_only or own_answer, the richest the "
                   "trace can feed)", choices=_estimator_choices)  # fmt: skip


ESTIMATOR_OPTIONS_HELP = "settings of that estimator, as a JSON object"


@dataclass(frozen=True)
class MinSigmaConfig(DetectorConfig):
    threshold: float = setting(0.05, "tau_sigma: a step is flagged when its sigma is below -tau", low=0.0)
    variant: Literal["argmin", "first_below"] = setting("argmin", "flag the lowest sigma, or the earliest one below "
                                                        "-tau")  # fmt: skip
    estimator: str = estimator_setting()
    estimator_options: dict[str, Any] = setting({}, ESTIMATOR_OPTIONS_HELP, advanced=True)


def resolve_estimator(name: str, trace: Trace) -> str:
    """``name``, or with "auto" the first of ``auto_estimators()`` (richest first) that ``trace`` can feed (the
    last one otherwise, so its needs are what is reported missing)."""
    if name != "auto":
        return name
    ranked = auto_estimators()
    return next((n for n in ranked if not estimators.get(n)().missing(trace)), ranked[-1])


def curve_estimator(trace: Trace) -> str | None:
    """The estimator for a trace's value curve on its own (the Diagnose page): the ``auto`` choice, else a
    model-free live estimator the trace can feed (flat ``uniform`` credit when it has an outcome but no answer to
    score), else None (no curve)."""
    name = resolve_estimator("auto", trace)
    if not estimators.get(name)().missing(trace):
        return name
    model_free = estimators.having(live=True, uses_model=False)
    return next((n for n in model_free if not estimators.get(n)().missing(trace)), None)


class ValueCurveDetector(Detector):
    """A detector that reads one estimator's value curve; ``config.estimator`` may be "auto"."""

    def estimator(self, trace: Trace):
        name = resolve_estimator(self.config.estimator, trace)
        return estimators.get(name)(**self.config.estimator_options)

    def missing(self, trace: Trace) -> list[str]:
        return self.estimator(trace).missing(trace)

    def mode(self, trace: Trace) -> str:
        return resolve_estimator(self.config.estimator, trace)

    def analysis(self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None):
        return analyzer.analyze(trace, segmenter, self.estimator(trace), progress)


@detectors.register("min_sigma")
class MinSigma(ValueCurveDetector):
    """The most negative redistributed reward (variant B sigma), if below -tau."""

    name = "min_sigma"
    Config = MinSigmaConfig

    def locate(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        result = self.analysis(analyzer, trace, segmenter, progress)
        sigma = result.sigma
        below = np.flatnonzero(sigma < -self.config.threshold)
        if self.config.variant == "first_below":
            prediction = int(below[0]) if len(below) else NO_ERROR
        else:
            best = int(np.argmin(sigma))
            prediction = best if sigma[best] < -self.config.threshold else NO_ERROR
        evidence = {"sigma": sigma.tolist(), "estimator": result.values.estimator}
        return FirstError(self.name, prediction, -sigma, evidence=evidence, cost=result.cost)


@dataclass(frozen=True)
class ValueDropConfig(DetectorConfig):
    mode: Literal["delta", "absolute"] = setting("delta", "flag the first step after which the value falls by delta "
                                                 "or more, or the first after which it is below absolute")  # fmt: skip
    delta: float = setting(0.2, "the fall that flags a step (mode delta)", low=0.0)
    absolute: float = setting(0.5, "the value below which a step is flagged (mode absolute)", low=0.0, high=1.0)
    estimator: str = estimator_setting()
    estimator_options: dict[str, Any] = setting({}, ESTIMATOR_OPTIONS_HELP, advanced=True)


@detectors.register("value_drop")
class ValueDrop(ValueCurveDetector):
    """The first boundary where the value falls by more than delta (or below tau_abs); the largest single
    drop is reported as evidence. The terminal value (the outcome) is part of the curve."""

    name = "value_drop"
    Config = ValueDropConfig

    def locate(
        self, analyzer: Analyzer, trace: Trace, segmenter: Segmenter, progress: ProgressFn | None = None
    ) -> FirstError:
        result = self.analysis(analyzer, trace, segmenter, progress)
        values = result.values.values
        drops = values[:-1] - values[1:]  # drop caused by segment t = value before minus value after
        if self.config.mode == "delta":
            hits = np.flatnonzero(drops >= self.config.delta)
        else:
            hits = np.flatnonzero(values[1:] < self.config.absolute)
        prediction = int(hits[0]) if len(hits) else NO_ERROR
        evidence = {
            "values": values.tolist(),
            "largest_drop_segment": int(np.argmax(drops)) + 1,
            "largest_drop": float(drops.max()),
            "estimator": result.values.estimator,
        }
        return FirstError(self.name, prediction, drops, evidence=evidence, cost=result.cost)
