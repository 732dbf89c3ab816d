"""Monte Carlo state values (docs/method.md §6): sample continuations from every state and grade them.

A rollout is graded on the text the state already holds plus the rollout (``traces.answers.grade_text``, the
grader the trainer's reward uses too): a state that ends at "The answer is" and a rollout " 7." state 7.

V-hat_t is the success rate of n continuations sampled from s_t (t = 1..K; V-hat_{K+1} := R), with a
Wilson 95% interval; sigma^MC follows from the same redistribution as RREDCoT. Rollouts that hit the token
cap without an answer are counted separately, and three estimates are reported (the RREDCoT paper's
truncation finding): ``p_low`` (truncated = failure, the value used), ``p_high`` (truncated = success) and
``p_cond`` (truncated left out).

Rollouts are stored with their seeds, text, grade and cost: asking for more reuses those already drawn,
and rollout i of state t always has the same seed, so results are reproducible. They come from the context's
sampler (``model/backends``: the local model, or an inference server), each backend's under its own key.
``forced_answer`` samples only the answer right after the prefix and the trigger (a cheap sampled counterpart
of R-hat); ``progressive`` adds batches until the Wilson half-width is small enough.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.base import EstimatorConfig, ValueEstimator, estimators
from rredcot_viz.estimators.rredcot import PLAIN_TRIGGER, THINKING_TRIGGER
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.settings import setting
from rredcot_viz.stats import newcombe_difference, wilson_interval
from rredcot_viz.traces.answers import grade_text
from rredcot_viz.types import Generation, PrefixSampling, Rollout, StateValues, content_key

if TYPE_CHECKING:
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@dataclass(frozen=True)
class MonteCarloConfig(EstimatorConfig):
    rollouts: int = setting(8, "continuations sampled from every state (n)", low=1)
    temperature: float = setting(0.7, "sampling temperature (0 = greedy)", low=0.0)
    top_p: float = setting(0.95, "nucleus sampling mass, in (0, 1]", low=0.0, high=1.0, advanced=True)
    max_new_tokens: int = setting(2048, "token cap per rollout; one that hits it without an answer is truncated",
                                  low=1)  # fmt: skip
    seed: int = setting(0, "base seed: rollout i of a state always gets the same seed", advanced=True)
    forced_answer: bool = setting(False, "sample only the answer right after the prefix and the trigger",
                                  advanced=True)  # fmt: skip
    forced_max_tokens: int = setting(16, "token cap of a forced answer", low=1, advanced=True)
    trigger: str | None = setting(None, "forced-answer trigger (none: by trace style, as for R-hat)", advanced=True)
    progressive: bool = setting(False, "add batches until the Wilson half-width is small enough", advanced=True)
    half_width: float = setting(0.10, "progressive: stop at this Wilson 95% half-width, in (0, 0.5)", low=0.0,
                                high=0.5, advanced=True)  # fmt: skip
    max_rollouts: int = setting(32, "progressive: at most this many rollouts per state", low=1, advanced=True)
    progressive_batch: int = setting(4, "progressive: rollouts added per round", low=1, advanced=True)
    batch_size: int = setting(16, "rows sampled per forward pass", low=1, advanced=True)
    stop_strings: tuple[str, ...] = setting((), "also end a rollout at these texts, e.g. where a few-shot prompt "
                                            "starts a new problem (comma-separated)", advanced=True)  # fmt: skip

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.progressive and self.max_rollouts < self.rollouts:
            raise ConfigError(f"rollouts must be <= max_rollouts when progressive, got {self.rollouts}")
        if not 0 < self.half_width < 0.5 or self.top_p == 0:  # the open ends the ranges cannot express
            raise ConfigError(f"need 0 < half_width < 0.5 and top_p > 0, got {self.half_width}, {self.top_p}")


PRESETS: dict[str, MonteCarloConfig] = {
    "method": MonteCarloConfig(),  # docs/method.md §6 defaults: 8 rollouts, T 0.7, top-p 0.95, 2048 tokens
    "thought_anchors": MonteCarloConfig(rollouts=100, temperature=0.6, top_p=0.95, max_new_tokens=16384),
    "vineppo": MonteCarloConfig(rollouts=9),
    "cpu_quick": MonteCarloConfig(rollouts=8, max_new_tokens=160),  # small models on a laptop CPU
}


def rollout_seed(base: int, prefix: int, index: int) -> int:
    digest = hashlib.sha256(f"{base}:{prefix}:{index}".encode()).hexdigest()
    return int(digest[:8], 16)


@estimators.register("mc")
class MonteCarloEstimator(ValueEstimator):
    name = "mc"
    Config = MonteCarloConfig
    provenance = "paper (arXiv 2606.06475, MC baseline); budgets and presets are design choices"
    needs = ("outcome", "reference_answer")
    samples = True
    live = False
    title = "Monte Carlo"
    # small models on a CPU: 8 rollouts of at most 160 tokens per state, or 4 of 96 where that takes over ~2 min
    app_starts = (PRESETS["cpu_quick"], replace(PRESETS["cpu_quick"], rollouts=4, max_new_tokens=96))

    def rollout_tokens(self, states: int) -> int:
        config = self.config
        per_rollout = config.forced_max_tokens if config.forced_answer else config.max_new_tokens
        return states * (config.max_rollouts if config.progressive else config.rollouts) * per_rollout

    def budget(self) -> str:
        return f"{self.config.rollouts} rollouts of at most {self.config.max_new_tokens} tokens per state"

    def trigger(self, context: TraceContext) -> str:
        if self.config.trigger is not None:
            return self.config.trigger
        return THINKING_TRIGGER if "</think>" in context.trace.cot else PLAIN_TRIGGER

    def sampling(self) -> SamplingConfig:
        config = self.config
        if config.forced_answer:
            return SamplingConfig(
                config.temperature, config.top_p, 0, config.forced_max_tokens, ("}",), False, config.batch_size
            )
        return SamplingConfig(
            config.temperature, config.top_p, 0, config.max_new_tokens, config.stop_strings, True, config.batch_size
        )

    def sampling_key(self, context: TraceContext) -> str:
        trigger = self.trigger(context) if self.config.forced_answer else None
        return content_key("mc", self.sampling(), trigger, self.config.seed, *context.sampler.key)

    def rollouts(self, context: TraceContext, prefix: int) -> list[Rollout]:
        """The rollouts stored for the state ``prefix`` tokens into the response, graded (``regrade``)."""
        stored = context.cache.rollouts(context.key, self.sampling_key(context), prefix)
        return [self.regrade(context, rollout) for rollout in stored]

    def draw(self, context: TraceContext, wanted: dict[int, int], progress: ProgressFn | None = None) -> None:
        """Make sure each state prefix has at least ``wanted[prefix]`` rollouts.

        One sampling call per state (longest prefix first), storing its rollouts right away: the model lock
        is released between states, ``progress`` may cancel between them, and what was drawn is kept."""
        key = self.sampling_key(context)
        extra = tuple(context.lm.encode(self.trigger(context))) if self.config.forced_answer else ()
        todo = [(p, len(self.rollouts(context, p))) for p, count in sorted(wanted.items(), reverse=True)]
        todo = [(p, have) for p, have in todo if wanted[p] > have]
        for done, (prefix, have) in enumerate(todo, start=1):
            seeds = tuple(rollout_seed(self.config.seed, prefix, i) for i in range(have, wanted[prefix]))
            cut = len(context.prompt_ids) + prefix
            request = PrefixSampling(cut, extra, seeds)
            (generations,) = context.sampler.sample_after_prefixes(context.ids[:cut], [request], self.sampling())
            graded = [self.grade(context, prefix, have + i, g) for i, g in enumerate(generations)]
            context.cache.put_rollouts(context.key, key, graded)
            if progress:
                progress(done, len(todo))

    def grade(self, context: TraceContext, prefix: int, index: int, generation: Generation) -> Rollout:
        """A rollout graded on what the state already holds plus the rollout (``graded_text``); one that hits the
        cap without an answer is truncated."""
        answer, correct = self._grade(context, prefix, generation.text)
        return Rollout(
            prefix,
            index,
            generation.seed,
            generation.text,
            answer,
            correct,
            generation.finish_reason,
            len(generation.token_ids),
        )

    def regrade(self, context: TraceContext, rollout: Rollout) -> Rollout:
        """A stored rollout graded again by today's grader against this context's reference (stored grades are a
        cache: rollouts drawn before the grader read the state's text, or for another reference, stay usable)."""
        answer, correct = self._grade(context, rollout.prefix, rollout.text)
        if (answer, correct) == (rollout.answer, rollout.correct):
            return rollout
        return replace(rollout, answer=answer, correct=correct)

    def graded_text(self, context: TraceContext, prefix: int, text: str) -> str | None:
        """The text a rollout is graded on: the state's response prefix, then (forced answers) the trigger and the
        sampled answer up to its closing brace, else the rollout; None for a forced answer never closed."""
        state = context.response.prefix_text(prefix)
        if not self.config.forced_answer:
            return state + text
        if "}" not in text:
            return None
        return state + self.trigger(context) + text.split("}", 1)[0] + "}"

    def _grade(self, context: TraceContext, prefix: int, text: str) -> tuple[str | None, bool]:
        graded = self.graded_text(context, prefix, text)
        if graded is None:
            return None, False
        result = grade_text(graded, context.trace.reference_answer)
        return result.answer, result.correct

    def pending(self, context: TraceContext, candidates: set[int], states: tuple[int, ...]) -> int:
        """Rollouts still to draw (progressive mode: at least its first batch per state)."""
        wanted = min(self.config.rollouts, self.config.progressive_batch) if self.config.progressive else None
        wanted = wanted or self.config.rollouts
        return sum(max(0, wanted - len(self.rollouts(context, prefix))) for prefix in states[:-1])

    def state_values(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        self.check(context.trace)
        prefixes = list(segmentation.state_prefixes[:-1])  # s_{K+1} needs no sampling: V_{K+1} := R
        config = self.config
        if config.progressive:
            target = {p: min(config.rollouts, config.progressive_batch) for p in prefixes}
            while target:
                self.draw(context, target, progress)
                target = {
                    p: n + config.progressive_batch
                    for p, n in target.items()
                    if n < config.max_rollouts and self._half_width(context, p, n) > config.half_width
                }
        else:
            self.draw(context, {p: config.rollouts for p in prefixes}, progress)
        counts = []
        for prefix in prefixes:
            drawn = self.rollouts(context, prefix)
            n = config.rollouts if not config.progressive else _progressive_count(drawn, config)
            counts.append(drawn[:n])
        return self._values(context, counts)

    def _half_width(self, context: TraceContext, prefix: int, n: int) -> float:
        drawn = self.rollouts(context, prefix)[:n]
        low, high = wilson_interval(sum(r.correct for r in drawn), len(drawn))
        return (high - low) / 2

    def _values(self, context: TraceContext, per_state: list[list[Rollout]]) -> StateValues:
        outcome = context.trace.outcome
        k = np.array([sum(r.correct for r in rs) for rs in per_state])
        n = np.array([len(rs) for rs in per_state])
        truncated = np.array([sum(r.truncated for r in rs) for rs in per_state])
        p_low = k / n
        p_high = (k + truncated) / n
        with np.errstate(invalid="ignore", divide="ignore"):
            p_cond = np.where(n > truncated, k / np.maximum(n - truncated, 1), np.nan)
        values = np.append(p_low, outcome)
        wilson = np.array([wilson_interval(int(a), int(b)) for a, b in zip(k, n, strict=True)] + [(outcome, outcome)])
        pairs = [*zip(k.tolist(), n.tolist(), strict=True)]
        differences = [newcombe_difference(*pairs[i], *pairs[i + 1]) for i in range(len(pairs) - 1)]
        # two disjoint halves of each state's rollouts, so MC's agreement with itself can be read (attribution.trust)
        halves = [[rs[: len(rs) // 2], rs[len(rs) // 2 : len(rs) // 2 * 2]] for rs in per_state]
        half_values = [
            np.append([np.mean([r.correct for r in pair[side]]) if pair[side] else np.nan for pair in halves], outcome)
            for side in (0, 1)
        ]
        components = {
            "V_mc": values,
            "p_high": np.append(p_high, outcome),
            "p_cond": np.append(p_cond, outcome),
            "truncated_fraction": np.append(truncated / n, 0.0),
            "rollouts": np.append(n, 0).astype(float),
            "successes": np.append(k, 0).astype(float),
            "V_half_a": half_values[0],
            "V_half_b": half_values[1],
        }
        intervals = {"V_mc": wilson}
        if differences:
            intervals["sigma_difference"] = np.array(differences)
        notes = []
        if truncated.sum():
            notes.append(
                f"{int(truncated.sum())} of {int(n.sum())} rollouts hit the {self.config.max_new_tokens}-token cap "
                f"without an answer and count as failures (p_low); p_high counts them as successes"
            )
        return StateValues(self.name, values, components, intervals, notes)


def _progressive_count(drawn: list[Rollout], config: MonteCarloConfig) -> int:
    """How many of the stored rollouts the progressive rule would have used (reproducible from the store)."""
    n = min(config.rollouts, config.progressive_batch)
    while n < min(config.max_rollouts, len(drawn)):
        low, high = wilson_interval(sum(r.correct for r in drawn[:n]), n)
        if (high - low) / 2 <= config.half_width:
            break
        n += config.progressive_batch
    return min(n, len(drawn))
