"""How long sampling work will take here, said before it starts: the tokens it may generate at most, divided
by the generation rate this machine showed recently (the model's meter: this process's sampling calls; else
the jobs the store recorded: earlier runs of the app on this machine).

On a CPU a decode step costs about the same for 1 row as for 16, so the rate is in generated tokens (rows x
steps) per second of sampling calls with similar batches: a rough figure, reported as "about".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.sampling import SamplingConfig

if TYPE_CHECKING:
    from rredcot_viz.store import Store

SAMPLING_OPERATIONS = ("sample", "sample_after_prefixes")
SAMPLING_JOBS = ("mc", "reset", "train")
MIN_SECONDS = 2.0  # less sampling time than this says little about the rate
CHEAP_ENOUGH_S = 120.0  # defaults are cut where the estimate is above this on the machine at hand
NOT_MEASURED = "Time here: not known yet; nothing has been sampled on this machine so far."


@dataclass(frozen=True)
class TimeEstimate:
    """At most ``tokens`` generated tokens at ``rate`` tokens/s (measured as ``source`` says)."""

    tokens: int
    rate: float
    source: str

    @property
    def seconds(self) -> float:
        return self.tokens / self.rate

    def line(self) -> str:
        return (
            f"at most about {duration(self.seconds)}: up to {self.tokens:,} generated tokens at "
            f"{rate_text(self.rate)} ({self.source})"
        )


def duration(seconds: float) -> str:
    """Seconds as a person reads them: "40 s", "3.5 min", "1.2 h"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def sampling_rate(
    lm: LanguageModel, store: Store | None = None, min_seconds: float = MIN_SECONDS
) -> tuple[float, str] | None:
    """Generated tokens per second of this machine's recent sampling, and where the figure comes from; None
    before anything was sampled here."""
    recent = [cost for operation, cost in lm.meter.history if operation in SAMPLING_OPERATIONS]
    tokens, seconds = sum(c.tokens_generated for c in recent), sum(c.seconds for c in recent)
    if seconds > min_seconds and tokens:
        return tokens / seconds, f"measured on this machine over its last {len(recent)} sampling calls"
    jobs = [row for row in (store.jobs(limit=50) if store is not None else []) if row["kind"] in SAMPLING_JOBS]
    costs = [row["cost"] or {} for row in jobs if row["status"] == "done"]
    tokens = sum(c.get("tokens_generated", 0) for c in costs)
    seconds = sum(c.get("seconds", 0.0) for c in costs)
    if seconds >= MIN_SECONDS and tokens:
        return tokens / seconds, f"measured over {len(costs)} earlier sampling jobs on this machine"
    return None


def calibrate(lm: LanguageModel, rows: int = 8, tokens: int = 24) -> None:
    """Sample ``rows`` x ``tokens`` tokens once (a few seconds on a CPU), so the meter knows this machine's rate."""
    prompt = lm.encode("Count from one to fifty in words: one, two,")
    config = SamplingConfig(temperature=1.0, max_new_tokens=tokens, batch_size=rows)
    lm.sample([prompt] * rows, list(range(rows)), config)


def estimate_sampling(
    lm: LanguageModel, tokens: int, store: Store | None = None, measure_now: bool = False
) -> TimeEstimate | None:
    """How long generating at most ``tokens`` tokens takes here; None when nothing was measured yet (unless
    ``measure_now``: then a short calibration call measures it)."""
    measured = sampling_rate(lm, store)
    if measured is None and measure_now:
        calibrate(lm)
        measured = sampling_rate(lm, store, min_seconds=0.0)
    if measured is None:
        return None
    rate, source = measured
    return TimeEstimate(int(tokens), rate, source)


def held_out_evaluations(config: Any, start: int = 0) -> int:
    """How many held-out evaluations a run from step ``start`` to ``config.steps`` makes (step 0 included)."""
    if not config.eval_every:
        return 0
    steps = range(start + 1, config.steps + 1)
    return int(start == 0) + sum(1 for s in steps if s % config.eval_every == 0 or s == config.steps)


def estimate_training(lm: LanguageModel, config: Any, store: Store, start: int = 0) -> tuple[float | None, str]:
    """Seconds a training run will take here (None when this machine has measured no step yet) and how that
    was reckoned: seconds per rollout of the steps stored by earlier runs, plus the held-out evaluations at
    this machine's sampling rate."""
    rollouts = config.prompts_per_step * config.group_size * max(config.steps - start, 0)
    runs = store.training_runs()
    metrics = store.train_metrics(runs["run_id"].tolist()[:8]) if len(runs) else None
    per_rollout = None
    if metrics is not None and {"seconds", "rollouts"} <= set(metrics.columns):
        measured = metrics.dropna(subset=["seconds", "rollouts"])
        measured = measured[measured["rollouts"] > 0].tail(50)
        if len(measured):
            per_rollout = float((measured["seconds"] / measured["rollouts"]).mean())
    evaluations = held_out_evaluations(config, start)
    answers = config.eval_problems * config.eval_samples
    evaluation = estimate_sampling(lm, evaluations * answers * config.max_new_tokens, store)
    parts, seconds = [], 0.0
    if per_rollout is None:
        parts.append(f"{config.steps - start} steps × {rollouts // max(config.steps - start, 1)} rollouts (no "
                     "training step measured on this machine yet)")  # fmt: skip
    else:
        seconds += rollouts * per_rollout
        parts.append(f"{config.steps - start} steps × {rollouts // max(config.steps - start, 1)} rollouts at "
                     f"{per_rollout:.2f} s per rollout (earlier runs here)")  # fmt: skip
    if evaluations:
        held_out = f"{plural(evaluations, 'held-out evaluation')} of {plural(answers, 'answer')}"
        if evaluation is None:
            parts.append(f"{held_out} (no sampling speed measured here yet)")
        else:
            seconds += evaluation.seconds
            parts.append(f"{held_out} (at most {duration(evaluation.seconds)} at {rate_text(evaluation.rate)})")
    known = per_rollout is not None and (not evaluations or evaluation is not None)
    return (seconds if known else None), " + ".join(parts)


def estimate_units(store: Store, kind: str, units: int, unit: str) -> tuple[float | None, str]:
    """Seconds for ``units`` units of a job of ``kind`` (traces of a dataset analysis, record x detector pairs of
    an evaluation) at the model seconds per unit of the finished jobs of that kind the store recorded, and
    how that was reckoned."""
    done = [row for row in store.jobs(limit=50) if row["kind"] == kind and row["status"] == "done" and row["total"]]
    seconds = sum((row["cost"] or {}).get("seconds", 0.0) for row in done)
    measured = sum(int(row["total"]) for row in done)
    if not measured or seconds <= 0:
        return None, f"{units} {unit}; no such job has finished on this machine yet"
    each = seconds / measured
    return units * each, f"{units} {unit} at {each:.1f} s each (earlier jobs here)"


def plural(count: int, noun: str) -> str:
    """``1 answer``, ``2 answers``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def rate_text(rate: float) -> str:
    """A generation rate as a person reads it: one decimal below 10 tokens/s (never "1 tokens/s")."""
    return f"{rate:.1f} tokens/s" if rate < 10 else f"{rate:.0f} tokens/s"


def time_line(seconds: float | None, how: str) -> str:
    """An estimate as the pages print it beside their start buttons."""
    return f"Time here: {'about ' + duration(seconds) if seconds is not None else 'not known yet'}; {how}."
