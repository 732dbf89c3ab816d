"""Which ``quick`` preset learns fastest on this machine: held-out accuracy gained per minute of training for
several prompts per step, at an equal budget of rollouts (embedded model, built-in task, LoRA, CPU).

Each setting trains ``--method`` from the same start with 8 rollouts per prompt for ``--rollouts`` rollouts in
all (1 prompt x 30 steps, 2 x 15, 4 x 8, ...), on ``--seeds`` seeds; the held-out accuracy (32 problems x 2
samples, fixed seeds) is measured at the start and the end. Sampling several prompts per step costs little
more than one (a decode step on a CPU is memory-bound, so 32 rows cost about what 8 do), while the update
grows with the rows: the bench measures which effect wins. Gains are printed with their spread over seeds:
with 64 held-out samples one sample is 0.016, so differences below a few points are noise, and the choice then
goes to the setting with more updates per minute.

Last line: ``best_prompts_per_step gain_per_min_<n> seconds_per_rollout_<n>`` for each setting.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.training import Trainer, builtin_split, quick


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="grpo")
    parser.add_argument("--prompts", default="1,2,4", help="prompts per step to compare")
    parser.add_argument("--rollouts", type=int, default=240, help="rollouts per run (steps = this / (8 x prompts))")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--model", help="catalogue key, model folder or GGUF file (default: the embedded model)")
    args = parser.parse_args(argv)
    settings = [int(n) for n in args.prompts.split(",")]
    lm = LanguageModel.load(ModelConfig(source=args.model) if args.model else ModelConfig())
    train, held_out = builtin_split(train=200, held_out=32, seed=0)
    gains: dict[int, list[float]] = {n: [] for n in settings}
    seconds: dict[int, list[float]] = {n: [] for n in settings}
    for seed in range(args.seeds):
        start_accuracy = None
        for prompts in settings:
            steps = max(1, round(args.rollouts / (8 * prompts)))
            config = quick(args.method, steps=steps, prompts_per_step=prompts, seed=seed, eval_every=0)
            trainer = Trainer(lm, config, train, held_out, run_id=f"quick-{prompts}-{seed}")
            if start_accuracy is None:
                start_accuracy = trainer.evaluate()
            started = time.perf_counter()
            history = [trainer.train_step()[0] for _ in range(steps)]
            training_s = time.perf_counter() - started
            final = trainer.evaluate()
            gains[prompts].append((final - start_accuracy) / (training_s / 60))
            seconds[prompts].append(training_s / sum(m["rollouts"] for m in history))
            print(
                f"seed {seed} {prompts} prompt(s) x {steps} steps: accuracy {start_accuracy:.3f} -> {final:.3f} in "
                f"{training_s:.0f} s of training ({seconds[prompts][-1]:.2f} s per rollout)",
                flush=True,
            )
    print(f"\n{args.method}, {args.rollouts} rollouts per run, {args.seeds} seed(s):")
    for prompts in settings:
        values = np.array(gains[prompts])
        print(
            f"  {prompts} prompt(s) per step: {values.mean():+.4f} accuracy per minute (seeds: "
            f"{', '.join(f'{v:+.4f}' for v in values)}); {np.mean(seconds[prompts]):.2f} s per rollout"
        )
    best = max(settings, key=lambda n: np.mean(gains[n]))
    print(
        f"best_prompts_per_step={best} "
        + " ".join(f"gain_per_min_{n}={np.mean(gains[n]):.4f}" for n in settings)
        + " "
        + " ".join(f"seconds_per_rollout_{n}={np.mean(seconds[n]):.2f}" for n in settings)
    )


if __name__ == "__main__":
    main()
