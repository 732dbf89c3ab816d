"""Short online refinements on the built-in task: GRPO, RREDCoT-GRPO, SRPO and RRPO, several seeds, on a CPU.

With ``--workers N`` the seeds run in N processes of one thread each (their step times are then measured at one
thread). For each seed and method, trains the model (LoRA, the ``quick`` preset at 1 prompt x 8 rollouts per step) for
``--steps`` steps, all runs of a seed advancing one step in turn (so their step times are measured under the
same load and the RREDCoT / GRPO ratio is paired by step), evaluating held-out accuracy every ``--eval-every`` steps (32
problems x 2 sampled answers, seeds that do not depend on the step, so every run is scored on the same draws).
RREDCoT runs with the default coupling (``value_baseline``, gae_lambda 1) and, beside it, with gae_lambda 0.5.

Also measured on the RREDCoT runs' own groups, every step:
- the mean advantage of the tokens of non-final segments of correct and of failed rollouts (sign check);
- ``uninformative_max_diff`` (the first ``--flat-check-steps`` steps of each seed): the same groups credited again
  by the trainer's own credit path (plan, packed scoring, ``combine``, redistribution, coupling) with an
  estimator whose values are a constant, against GRPO's advantages; 0 up to rounding is the invariant
  (docs/method.md §5), and a wrong segment-to-token mapping, sign or baseline in that path would show here.
And on the SRPO and RRPO runs, from their step metrics: the share of resets that started from an empty prefix
(``reset_empty_prefix_share``, target <= 0.25), the mean share of the parent kept, and SRPO's localiser parse
rate (last box names a step) with the share that got the fallback step.

Writes ``bench/out/trainer_curves.csv`` and ``.png`` (mean over seeds with a min-max band). Last line:
``start_acc grpo_final rredcot_final srpo_final rrpo_final rredcot_minus_grpo correct_nonfinal_adv
failed_nonfinal_adv uninformative_max_diff rredcot_over_grpo_step_time`` (+ the gae 0.5 run's final), then the
reset figures ``reset_empty_prefix_share`` (SRPO and RRPO pooled, with its Wilson interval
``reset_empty_prefix_low`` / ``_high``, and each), ``reset_uniform_empty_chance`` (the mean of 1/H over the
parents: the share a uniform reset scatters around), ``reset_prefix_fraction``,
``localiser_parse_rate``, ``localiser_fallback_share`` and ``localiser_fallback`` (the rule).
"""

from __future__ import annotations

import argparse
import copy
import csv
import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from workers import model_pool, worker_model

from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.estimators.coupling import grpo_advantages
from rredcot_viz.model.catalogue import DEFAULT_MODEL
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.stats import wilson_interval
from rredcot_viz.training import Trainer, builtin_split, quick
from rredcot_viz.training.credit import couple_group, credit_estimator, group_sigmas
from rredcot_viz.training.rollouts import Group
from rredcot_viz.types import StateValues

OUT = PROJECT_ROOT / "bench" / "out"
RUNS = {  # row name -> (method, config overrides)
    "grpo": ("grpo", {}),
    "rredcot": ("rredcot", {}),
    "rredcot_gae0.5": ("rredcot", {"gae_lambda": 0.5}),
    "srpo": ("srpo", {}),
    "rrpo": ("rrpo", {}),
}


class FlatValues:
    """Wraps an estimator so that its values are a constant (0.5 at every state, the reward at the end): the
    planning and scoring still run, only the values are replaced."""

    def __init__(self, estimator: ValueEstimator):
        self.estimator = estimator

    def __getattr__(self, name: str) -> object:
        return getattr(self.estimator, name)

    def combine(self, series: list, scores: dict, n_states: int, outcome: float) -> StateValues:
        result = self.estimator.combine(series, scores, n_states, outcome)
        result.values = np.append(np.full(n_states - 1, 0.5), outcome)
        return result


class CreditProbe:
    """Collects, from the RREDCoT run's groups, non-final segment advantages and the flat-estimator check."""

    def __init__(self, flat_check_steps: int = 0) -> None:
        self.nonfinal: dict[float, list[float]] = {1.0: [], 0.0: []}
        self.flat_max_diff = 0.0
        self.flat_groups = 0
        self.flat_check_steps = flat_check_steps

    def __call__(self, trainer: Trainer, metrics: dict, groups: list[Group]) -> None:
        for group in groups:
            for r in group.rollouts:
                for a, b in r.segments[:-1]:
                    self.nonfinal[r.reward].extend(r.token_advantages[max(a, r.suffix_start) : b].tolist())
            if metrics["step"] <= self.flat_check_steps:
                self.flat_check(trainer, group)

    def flat_check(self, trainer: Trainer, group: Group) -> None:
        """The group credited again by the trainer's credit path with constant values, against GRPO."""
        credit = trainer.config.credit
        problem = trainer.credit.problems[group.problem_index]
        rollouts = copy.deepcopy(group.rollouts)
        flat = FlatValues(credit_estimator(credit, problem))
        prompt = trainer.credit.prompt_ids(problem)
        sigmas = group_sigmas(trainer.credit.policy, credit, flat, prompt, rollouts, problem)  # type: ignore[arg-type]
        couple_group(rollouts, sigmas, credit)
        grpo = grpo_advantages(np.array([r.reward for r in rollouts]))
        for r, baseline in zip(rollouts, grpo, strict=True):
            self.flat_max_diff = max(self.flat_max_diff, float(np.abs(r.token_advantages - baseline).max(initial=0.0)))
        self.flat_groups += 1

    def merge(self, other: CreditProbe) -> None:
        """Add another seed's observations (each seed probes its own RREDCoT run)."""
        for outcome, values in other.nonfinal.items():
            self.nonfinal[outcome].extend(values)
        self.flat_max_diff = max(self.flat_max_diff, other.flat_max_diff)
        self.flat_groups += other.flat_groups

    @property
    def flat_result(self) -> float:
        """The check's max difference, or nan when it checked no group (no RREDCoT run, or 0 steps asked)."""
        return self.flat_max_diff if self.flat_groups else float("nan")

    def mean(self, outcome: float) -> float:
        values = self.nonfinal[outcome]
        return float(np.mean(values)) if values else float("nan")


RESET_FIGURES = (
    "reset_empty_prefix_share",
    "reset_uniform_empty_chance",
    "reset_prefix_fraction",
    "localiser_parse_rate",
    "localiser_fallback_share",
)


def reset_figures(steps: list[dict]) -> dict[str, float]:
    """The reset figures of a run's step metrics, each step weighted by its reset groups."""
    weights = np.array([m.get("reset_groups", 0) for m in steps], dtype=float)
    figures = {"reset_groups": float(weights.sum())}
    for name in RESET_FIGURES:
        rows = [(m[name], w) for m, w in zip(steps, weights, strict=True) if name in m and w > 0]
        if rows:
            values, counts = np.array(rows).T
            figures[name] = float(np.average(values, weights=counts))
    return figures


@dataclass
class SeedResult:
    """One seed's runs: held-out accuracy at each evaluation, step seconds, paired step-time ratios, credit probe."""

    seed: int
    evals: dict[str, list[tuple[int, float]]]
    seconds: dict[str, list[float]]
    paired: list[float]
    probe: CreditProbe
    wall_s: float
    steps: dict[str, list[dict]]  # each run's step metrics


def run_seed(lm: LanguageModel, seed: int, args: argparse.Namespace, runs: list[str]) -> SeedResult:
    """Every run of one seed, advancing one step in turn (their times share the load, so the RREDCoT / GRPO
    ratio is paired by step)."""
    train, held_out = builtin_split(train=200, held_out=32, seed=0)
    held_out = held_out[: args.eval_problems or None]
    trainers = {}
    for name in runs:
        method, overrides = RUNS[name]
        config = quick(  # one prompt per step: the protocol of every table so far (the preset now uses 4)
            method=method, steps=args.steps, seed=seed, eval_every=args.eval_every, prompts_per_step=1, **overrides
        )
        trainers[name] = Trainer(lm, config, train, held_out, run_id=f"bench-{name}-{seed}")
    started = time.perf_counter()
    start_accuracy = next(iter(trainers.values())).evaluate()  # the same base model and seeds for every run
    evals = {name: [(0, start_accuracy)] for name in runs}
    probe = CreditProbe(args.flat_check_steps)
    result = SeedResult(seed, evals, {name: [] for name in runs}, [], probe, 0.0, {name: [] for name in runs})
    for step in range(1, args.steps + 1):
        for name, trainer in trainers.items():
            metrics, groups = trainer.train_step()
            result.seconds[name].append(metrics["seconds"])
            result.steps[name].append(metrics)
            if name == "rredcot":
                result.probe(trainer, metrics, groups)
            if step % args.eval_every == 0 or step == args.steps:
                result.evals[name].append((step, trainer.evaluate()))
        if {"rredcot", "grpo"} <= set(runs):
            result.paired.append(result.seconds["rredcot"][-1] / result.seconds["grpo"][-1])
    result.wall_s = time.perf_counter() - started
    return result


def seeds_of(args: argparse.Namespace) -> range:
    return range(args.first_seed, args.first_seed + args.seeds)


def seed_results(args: argparse.Namespace, runs: list[str]) -> Iterator[SeedResult]:
    """Each seed's result in seed order. With ``--workers N`` the seeds run in N processes of one thread each (a
    small model's step gains little from a second thread); each process loads the model once. With 1, this process
    runs them on one thread too: torch's default (every core) beside another job oversubscribes the cores."""
    if args.workers == 1:
        torch.set_num_threads(1)
        lm = LanguageModel.load(ModelConfig(source=args.model))
        for seed in seeds_of(args):
            yield run_seed(lm, seed, args, runs)
        return
    with model_pool(args.workers, args.model) as pool:
        yield from pool.map(_run_seed_in_worker, seeds_of(args), itertools.repeat(args), itertools.repeat(runs))


def _run_seed_in_worker(seed: int, args: argparse.Namespace, runs: list[str]) -> SeedResult:
    return run_seed(worker_model(), seed, args, runs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1 (more "
                        "seeds of an earlier run without repeating its own)")  # fmt: skip
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--eval-problems", type=int, default=0, help="the first N of the 32 held-out problems (0: all)")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated rows of {', '.join(RUNS)}")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="catalogue key, model folder or GGUF file")
    parser.add_argument(
        "--flat-check-steps", type=int, default=3, help="steps per seed whose RREDCoT groups are re-credited flat"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="processes running seeds (one thread each; 1 = this process)"
    )
    args = parser.parse_args(argv)
    runs = [name for name in args.runs.split(",") if name]
    OUT.mkdir(parents=True, exist_ok=True)
    rows, step_times = [], {name: [] for name in runs}
    curves: dict[str, list[list[float]]] = {name: [] for name in runs}
    probe = CreditProbe()
    steps: dict[str, list[dict]] = {name: [] for name in runs}
    started_all = time.perf_counter()
    paired: list[float] = []  # rredcot / grpo seconds of the same step, run back to back
    for result in seed_results(args, runs):
        paired += result.paired
        probe.merge(result.probe)
        for name in runs:
            steps[name] += result.steps[name]
            step_times[name].extend(result.seconds[name])
            curves[name].append([acc for _, acc in result.evals[name]])
            rows += [
                {"run": name, "seed": result.seed, "step": s, "held_out_accuracy": a} for s, a in result.evals[name]
            ]
            print(
                f"seed {result.seed} {name:15s}: accuracy "
                + " ".join(f"{s}:{a:.3f}" for s, a in result.evals[name])
                + f"  ({np.mean(result.seconds[name]):.1f} s/step)",
                flush=True,
            )
        print(f"seed {result.seed}: {result.wall_s:.0f} s", flush=True)
    with open(OUT / "trainer_curves.csv", "w", newline="") as sink:
        writer = csv.DictWriter(sink, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    eval_steps = sorted({r["step"] for r in rows})
    arrays = {name: np.array(curves[name]) for name in runs}
    plot(eval_steps, arrays, args)
    finals = {name: float(arrays[name][:, -1].mean()) for name in runs}
    start = float(np.mean([arrays[name][:, 0].mean() for name in runs]))
    print(f"\n{args.model}, {args.seeds} seed(s) x {args.steps} steps, {time.perf_counter() - started_all:.0f} s")
    print(f"starting held-out accuracy (step 0, mean over seeds): {start:.3f}")
    for name in runs:
        print(
            f"{name:15s}: final {finals[name]:.3f} (seeds {', '.join(f'{a:.3f}' for a in arrays[name][:, -1])}); "
            f"{np.mean(step_times[name]):.1f} s/step"
        )
    print(
        f"RREDCoT non-final segment tokens: correct {probe.mean(1.0):+.3f} (n={len(probe.nonfinal[1.0])}), "
        f"failed {probe.mean(0.0):+.3f} (n={len(probe.nonfinal[0.0])}); flat-estimator max |A - A_grpo| "
        f"{probe.flat_result:.1e} over {probe.flat_groups} groups (trainer's credit path, constant values)"
    )
    resets = {name: reset_figures(steps[name]) for name in ("srpo", "rrpo") if name in runs}
    for name, figures in resets.items():
        print(f"{name} resets: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    pooled = reset_figures([m for name in resets for m in steps[name]])
    fallback = quick("srpo").localizer_fallback
    share, groups = pooled.get("reset_empty_prefix_share", float("nan")), int(pooled["reset_groups"])
    chance = pooled.get("reset_uniform_empty_chance", float("nan"))
    low, high = float("nan"), float("nan")
    if groups:
        empty = round(share * groups)  # the share is a mean over steps weighted by their groups: a count again
        low, high = wilson_interval(empty, groups)
        print(
            f"resets from an empty prefix: {empty} of {groups} = {share:.3f}, Wilson 95% [{low:.3f}, {high:.3f}]; "
            f"a uniform reset over the same parents' steps: {chance:.3f} (mean 1/H)"
        )
    reset_line = (
        f"reset_empty_prefix_share={share:.3f} reset_empty_prefix_low={low:.3f} reset_empty_prefix_high={high:.3f} "
        f"reset_uniform_empty_chance={chance:.3f} "
        + "".join(
            f"{name}_reset_empty_prefix_share={resets[name].get('reset_empty_prefix_share', float('nan')):.3f} "
            for name in resets
        )
        + f"reset_prefix_fraction={pooled.get('reset_prefix_fraction', float('nan')):.3f} "
        + f"reset_groups={groups} "
        + f"localiser_parse_rate={resets.get('srpo', {}).get('localiser_parse_rate', float('nan')):.3f} "
        + f"localiser_fallback_share={resets.get('srpo', {}).get('localiser_fallback_share', float('nan')):.3f} "
        + f"localiser_fallback={fallback}"
    )
    get = lambda name: finals.get(name, float("nan"))  # noqa: E731
    ratio = float(np.median(paired)) if paired else float("nan")
    if paired:
        print(
            f"RREDCoT / GRPO step time, paired by step (run back to back): median {ratio:.2f}, "
            f"mean {np.mean(paired):.2f}; means over all steps {np.mean(step_times['rredcot']):.1f} / "
            f"{np.mean(step_times['grpo']):.1f} s"
        )
    print(
        f"start_acc={start:.3f} grpo_final={get('grpo'):.3f} rredcot_final={get('rredcot'):.3f} "
        f"srpo_final={get('srpo'):.3f} rrpo_final={get('rrpo'):.3f} "
        f"rredcot_minus_grpo={get('rredcot') - get('grpo'):+.3f} correct_nonfinal_adv={probe.mean(1.0):.3f} "
        f"failed_nonfinal_adv={probe.mean(0.0):.3f} uninformative_max_diff={probe.flat_result:.2e} "
        f"rredcot_over_grpo_step_time={ratio:.2f} rredcot_gae05_final={get('rredcot_gae0.5'):.3f} "
        f"seeds={args.seeds} steps={args.steps} {reset_line}"
    )


def plot(steps: list[int], curves: dict[str, np.ndarray], args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    for name, runs in curves.items():
        line = axis.plot(steps, runs.mean(axis=0), marker="o", label=name)[0]
        if len(runs) > 1:
            axis.fill_between(steps, runs.min(axis=0), runs.max(axis=0), color=line.get_color(), alpha=0.15)
    axis.set_xlabel("training step")
    axis.set_ylabel("held-out accuracy (32 problems x 2)")
    axis.set_title(
        f"{args.model}, built-in task, LoRA, 8 rollouts/step\n{args.seeds} seed(s), band = min-max over seeds"
    )
    axis.legend()
    figure.tight_layout()
    figure.savefig(OUT / "trainer_curves.png", dpi=120)


if __name__ == "__main__":
    main()
