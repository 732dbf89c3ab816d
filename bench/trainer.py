"""Short online refinements on the built-in task: GRPO vs RREDCoT-GRPO vs SRPO, several seeds, on a CPU.

For each seed and method, trains the embedded model (LoRA) for ``--steps`` steps with 8 trained rollouts per
step, evaluating held-out accuracy every 5 steps (32 problems x 2 sampled answers, step-independent seeds).
Writes the curves to ``bench/out/trainer_curves.csv`` and ``.png``, prints the starting accuracy, the steps
each method needs to reach GRPO's final accuracy, and the per-step time ratio RREDCoT / GRPO. Last line:
``seeds=<n> steps=<n> grpo_final_acc=<x> rredcot_final_acc=<y> srpo_final_acc=<z> rredcot_over_grpo_step_time=<r>``.
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.training import Trainer, builtin_split, quick

OUT = PROJECT_ROOT / "bench" / "out"
METHODS = ("grpo", "rredcot", "srpo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--eval-every", type=int, default=5)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    lm = LanguageModel.load()
    train, held_out = builtin_split(train=200, held_out=32, seed=0)
    rows, step_times, finals = [], {m: [] for m in METHODS}, {m: [] for m in METHODS}
    curves: dict[str, list[list[float]]] = {m: [] for m in METHODS}
    for seed in range(args.seeds):
        for method in METHODS:
            config = quick(method=method, steps=args.steps, seed=seed, eval_every=args.eval_every)
            trainer = Trainer(lm, config, train, held_out, run_id=f"bench-{method}-{seed}")
            started = time.perf_counter()
            history = trainer.run()
            evals = [(m["step"], m["held_out_accuracy"]) for m in history if "held_out_accuracy" in m]
            seconds = [m["seconds"] for m in history if m["step"] > 0]
            step_times[method].extend(seconds)
            finals[method].append(evals[-1][1])
            curves[method].append([acc for _, acc in evals])
            for step, accuracy in evals:
                rows.append({"method": method, "seed": seed, "step": step, "held_out_accuracy": accuracy})
            print(
                f"seed {seed} {method:8s}: accuracy "
                + " ".join(f"{s}:{a:.3f}" for s, a in evals)
                + f"  ({np.mean(seconds):.1f} s/step, {time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    with open(OUT / "trainer_curves.csv", "w", newline="") as sink:
        writer = csv.DictWriter(sink, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    eval_steps = sorted({r["step"] for r in rows})
    mean_curves = {m: np.mean(np.array(curves[m]), axis=0) for m in METHODS}
    plot(eval_steps, mean_curves, curves)
    print(f"\nstarting held-out accuracy (step 0, mean over seeds): {mean_curves['grpo'][0]:.3f}")
    target = mean_curves["grpo"][-1]
    for method in METHODS:
        reached = next((s for s, a in zip(eval_steps, mean_curves[method], strict=True) if a >= target), None)
        print(
            f"{method:8s}: final {mean_curves[method][-1]:.3f} "
            f"(seeds {', '.join(f'{a:.3f}' for a in finals[method])}); "
            f"reaches GRPO's final {target:.3f} at step {reached if reached is not None else 'never'}; "
            f"{np.mean(step_times[method]):.1f} s/step"
        )
    ratio = np.mean(step_times["rredcot"]) / np.mean(step_times["grpo"])
    print(
        f"seeds={args.seeds} steps={args.steps} grpo_final_acc={np.mean(finals['grpo']):.3f} "
        f"rredcot_final_acc={np.mean(finals['rredcot']):.3f} srpo_final_acc={np.mean(finals['srpo']):.3f} "
        f"rredcot_over_grpo_step_time={ratio:.2f}"
    )


def plot(steps: list[int], means: dict[str, np.ndarray], curves: dict[str, list[list[float]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    for method, mean in means.items():
        line = axis.plot(steps, mean, marker="o", label=f"{method} (mean)")[0]
        for curve in curves[method]:
            axis.plot(steps, curve, color=line.get_color(), alpha=0.25, linewidth=1)
    axis.set_xlabel("training step")
    axis.set_ylabel("held-out accuracy")
    axis.set_title("SmolLM2-135M on the built-in arithmetic task (LoRA, 8 rollouts/step)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(OUT / "trainer_curves.png", dpi=120)


if __name__ == "__main__":
    main()
