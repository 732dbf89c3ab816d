"""The value-estimator interface (docs/method.md §3): one ``StateValues`` per trace and segmentation, holding a
value for every state s_1..s_{K+1}.

An estimator that needs model scores declares them as ``ScoreSeries`` (a context and a target text scored
after every state prefix); the engine computes all missing (series, prefix) pairs in one pass that reuses
the trace's KV cache, and caches them, so estimators never call the model themselves for scoring.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rredcot_viz.errors import ConfigError, MissingReferenceError
from rredcot_viz.model.meter import measure
from rredcot_viz.registry import Registry
from rredcot_viz.settings import Settings, with_overrides
from rredcot_viz.traces.needs import describe, missing
from rredcot_viz.types import ScoreSeries, StateValues

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation
    from rredcot_viz.traces.trace import Trace


@dataclass(frozen=True)
class EstimatorConfig(Settings):
    """Base of every estimator's config."""


class ValueEstimator(ABC):
    """Subclasses set ``name``, ``Config``, ``provenance``, ``needs``, declare their capabilities (``uses_model``,
    ``samples``, ``live``, ``credit``, ``steps_only``) and implement ``state_values`` (``credit`` ones also
    ``combine``). Pickers, the trainer and the detectors select estimators by these declarations
    (``estimators.having(live=True)``), never by name."""

    name: ClassVar[str]
    Config: ClassVar[type[EstimatorConfig]] = EstimatorConfig
    provenance: ClassVar[str] = "design choice (configurable)"
    needs: ClassVar[tuple[str, ...]] = ("outcome",)  # what it needs of a trace: ``traces.needs.NEED_TEXT`` names
    uses_model: ClassVar[bool] = True  # False: values without any model call
    samples: ClassVar[bool] = False  # draws rollouts from the model (minutes on a CPU): a background job
    live: ClassVar[bool] = True  # cheap enough to run while the user waits (the Inspect page's picker)
    credit: ClassVar[bool] = False  # values from scores alone (``combine``), so the trainer can credit rollouts
    steps_only: ClassVar[bool] = False  # values only the trace's own steps (a segmenter that ``follows_steps``)
    auto_rank: ClassVar[int] = 0  # "auto" picks the highest-ranked one a trace can feed (0: never picked by auto)
    fitted: ClassVar[bool] = False  # runs only where it was fitted for the loaded model: never offered as a fallback
    fallback_note: ClassVar[str] = ""  # why a trace's value curve is this one and not a richer one's (when picked)
    title: ClassVar[str] = ""  # its name in a sentence ("Monte Carlo"); empty: its registered name
    # a sampling estimator's starting settings in the app: the first, or the next where it would take minutes here
    app_starts: ClassVar[tuple[EstimatorConfig, ...]] = ()

    def __init__(self, config: EstimatorConfig | None = None, **overrides: Any):
        base = config or self.Config()
        if not isinstance(base, self.Config):
            raise ConfigError(f"{self.name} needs a {self.Config.__name__}, got {type(base).__name__}")
        self.config = with_overrides(base, f"estimator {self.name!r}", overrides)

    def missing(self, trace: Trace) -> list[str]:
        """What this estimator needs and ``trace`` lacks (``traces.needs``), checked without the model."""
        return missing(trace, self.needs)

    def check(self, trace: Trace) -> None:
        """Raise ``MissingReferenceError`` naming what this estimator needs and the trace lacks."""
        lacking = self.missing(trace)
        if lacking:
            usable = [
                n
                for n in estimators.names()
                if not estimators.get(n).fitted and not missing(trace, estimators.get(n).needs)
            ]
            alternatives = f"estimators that can run on it: {', '.join(usable)}" if usable else "no estimator can run"
            raise MissingReferenceError(
                f"estimator {self.name!r} needs {describe(lacking)}, which this trace does not have; add it to "
                f"the trace, or use another estimator ({alternatives})"
            )

    def series(self, context: TraceContext) -> list[ScoreSeries]:
        """The model scores this estimator needs at every state (empty for model-free estimators)."""
        return []

    def state_target(self, series: ScoreSeries, subject: Any, prefix: int) -> str:
        """The target of a per-state series after the first ``prefix`` response tokens of ``subject``
        (a ``ScoringSubject``: ``trace`` and ``response``); fixed series keep their one target."""
        return series.target

    def pending(self, context: TraceContext, candidates: set[int], states: tuple[int, ...]) -> int:
        """Model work still needed for ``states`` (after the first call scores ``candidates``): the score items
        not in the cache yet. 0 means the values come from the cache with no model call."""
        prefixes = candidates | set(states)
        items = [item for row in context.items(self.series(context), prefixes, self).values() for item in row]
        return len(context.missing_items(items))

    def estimate(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        """Values for the states s_1..s_{K+1} of ``segmentation``, with the cost of the model calls made for
        them (``progress(done, total)`` for slow ones)."""
        with measure() as spent:
            values = self.state_values(context, segmentation, progress)
        values.cost = spent.cost
        return values

    @abstractmethod
    def state_values(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        """What ``estimate`` returns; implemented by each estimator."""

    def rollout_tokens(self, states: int) -> int:
        """At most how many tokens a ``samples`` estimator generates over ``states`` states, for the time estimate
        a page shows before it starts (0: it samples nothing)."""
        return 0

    def budget(self) -> str:
        """What its settings draw, in words, for a page that says why it started on cheaper ones."""
        return f"{self.title or self.name}'s settings"

    def combine(
        self, series: list[ScoreSeries], scores: dict[str, list[np.ndarray]], n_states: int, outcome: float
    ) -> StateValues:
        """State values from the per-token log-probs of each of ``series`` at each of ``n_states`` states, with no
        model call, so the trainer scores a whole group of rollouts in one packed call and reuses this arithmetic.
        Implemented by the estimators that declare ``credit``."""
        raise NotImplementedError(f"estimator {self.name!r} cannot credit rollouts (it declares credit = False)")


estimators: Registry[type[ValueEstimator]] = Registry("estimator")
DEFAULT_ESTIMATOR = "rredcot"  # what the faces and the trainer start on: RREDCoT's own value estimate
# R-hat alone: the first look before v-hat's long paths are scored, and the credit of a problem without a reference
# solution (its scores are the first call's of every richer RREDCoT estimator)
R_HAT_ALONE = "answer_only"


def live_estimators() -> list[str]:
    """Estimators cheap enough to run while the user waits (the Inspect and Dataset pages)."""
    return estimators.having(live=True)


def credit_estimators() -> list[str]:
    """Estimators the trainer can credit rollouts with (they declare ``credit`` and implement ``combine``)."""
    return estimators.having(credit=True)


def auto_estimators() -> list[str]:
    """What an estimator choice of "auto" picks from, richest first (``auto_rank``)."""
    ranked = [name for name in estimators.names() if estimators.get(name).auto_rank > 0]
    return sorted(ranked, key=lambda name: -estimators.get(name).auto_rank)


def sampling_estimators() -> list[str]:
    """Estimators that draw rollouts, so a page runs them as a background job."""
    return estimators.having(samples=True)


def runnable_count(name: str, traces: Sequence[Trace]) -> int:
    """On how many of ``traces`` estimator ``name`` (default settings) can run: its needs and its own checks (a
    trace that is its own reference solution), from the traces' fields alone."""
    estimator = estimators.get(name)()
    count = 0
    for trace in traces:
        try:
            estimator.check(trace)
        except MissingReferenceError:
            continue
        count += 1
    return count


def default_estimator(traces: Sequence[Trace], preferred: str, names: Sequence[str] | None = None) -> str:
    """The estimator a page starts on: ``preferred`` when it runs on as many of ``traces`` as any of ``names``
    (default: the live ones), else the one that runs on most of them, the richest (``auto_rank``) among equals,
    so no page opens on a choice that cannot run on what it shows."""
    names = list(names if names is not None else live_estimators())
    counts = {name: runnable_count(name, traces) for name in dict.fromkeys([preferred, *names])}
    most = max(counts.values())
    if counts[preferred] == most:
        return preferred
    return min((name for name in names if counts[name] == most), key=lambda name: -estimators.get(name).auto_rank)


def usable_estimator(name: str, trace: Trace) -> tuple[str, str | None]:
    """``name`` when it can run on ``trace``, else the live estimator the trace can feed (``default_estimator``)
    with one line saying which and why; ``name`` and no line when none can (the analysis then says what is
    missing)."""
    chosen = default_estimator([trace], name)
    if chosen == name:
        return name, None
    lacking = estimators.get(name)().missing(trace)
    needs = f", which needs {describe(lacking)}" if lacking else ""
    return chosen, f"Using {chosen} instead of {name}{needs}: {estimators.get(chosen).fallback_note}"


def richer_estimators(trace: Trace, names: Sequence[str] | None = None) -> dict[str, list[str]]:
    """The estimators of ``names`` (default: the live ones) that ``trace`` cannot feed, each with what it lacks
    (``traces.needs`` names): the choices a reference answer or an outcome label would open."""
    names = names if names is not None else live_estimators()
    lacking = {name: estimators.get(name)().missing(trace) for name in names}
    return {name: needs for name, needs in lacking.items() if needs}
