"""Value estimators, registered by name in ``estimators`` (docs/method.md §3), plus redistribution and coupling."""

from rredcot_viz.estimators import montecarlo, probe, published, rredcot, uniform  # noqa: F401  (registers them)
from rredcot_viz.estimators.aggregation import aggregations
from rredcot_viz.estimators.base import (
    DEFAULT_ESTIMATOR,
    EstimatorConfig,
    ValueEstimator,
    auto_estimators,
    credit_estimators,
    default_estimator,
    estimators,
    live_estimators,
    richer_estimators,
    sampling_estimators,
    usable_estimator,
)
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.types import ScoreSeries, StateValues

__all__ = [
    "DEFAULT_ESTIMATOR",
    "EstimatorConfig",
    "ScoreSeries",
    "StateValues",
    "ValueEstimator",
    "aggregations",
    "auto_estimators",
    "credit_estimators",
    "default_estimator",
    "estimators",
    "live_estimators",
    "redistribute",
    "richer_estimators",
    "sampling_estimators",
    "usable_estimator",
]
