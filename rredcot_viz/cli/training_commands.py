"""``train``: a short online RL refinement, headless, logged to the store with checkpoints."""

from __future__ import annotations

import argparse

from rredcot_viz.cli import Command, ProgressBars, commands
from rredcot_viz.cli.model_commands import add_model_arguments, load_from_args
from rredcot_viz.cli.options import parse_overrides


def _configure_train(parser: argparse.ArgumentParser) -> None:
    from rredcot_viz.training import PRESETS, methods

    parser.add_argument("--method", default="grpo", choices=methods.names())
    parser.add_argument("--preset", default="quick", choices=list(PRESETS))
    parser.add_argument("--steps", type=int, help="training steps (overrides the preset)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--problems",
        help="problems with reference answers in any importable format (GSM8K JSONL, "
        "...); default: the built-in arithmetic task",
    )
    parser.add_argument("--held-out", type=int, default=32, help="problems kept out of training for evaluation")
    parser.add_argument("--opt", action="append", metavar="KEY=VALUE", help="any TrainConfig setting")
    parser.add_argument("--resume", metavar="RUN_ID", help="continue this run from its last checkpoint")
    parser.add_argument("--no-store", action="store_true", help="do not log to the DuckDB store")
    add_model_arguments(parser)


def _run_train(args: argparse.Namespace) -> int:
    from rredcot_viz.store import Store
    from rredcot_viz.traces.importers import import_file
    from rredcot_viz.training import PRESETS, TrainConfig, problems_from_traces
    from rredcot_viz.training.runs import run_training

    overrides = parse_overrides(TrainConfig, args.opt)
    overrides.update(method=args.method, seed=args.seed, eval_problems=args.held_out)
    if args.steps:
        overrides["steps"] = args.steps
    config = PRESETS[args.preset](**overrides)
    problems = None
    if args.problems:
        pool = problems_from_traces(import_file(args.problems).traces)
        problems = (pool[args.held_out :], pool[: args.held_out])
    store = None if args.no_store else Store()
    bars = ProgressBars()

    def show(metrics: dict) -> None:
        if "held_out_accuracy" in metrics:
            bars.close()
            print(
                f"step {metrics['step']:3d}: held-out accuracy {metrics['held_out_accuracy']:.3f}"
                + (
                    f", reward {metrics['reward_mean']:.3f}, {metrics['seconds']:.1f} s/step" if metrics["step"] else ""
                ),
                flush=True,
            )

    run_id, history = run_training(
        load_from_args(args),
        config,
        store,
        problems,
        run_id=args.resume,
        resume=bool(args.resume),
        progress=bars.callback(f"{config.method} steps"),
        on_log=show,
    )
    bars.close()
    trained = [m for m in history if m["step"] > 0]
    seconds = sum(m["seconds"] for m in trained)
    print(f"run {run_id}: {len(trained)} steps in {seconds:.0f} s" + (f", logged to {store.path}" if store else ""))
    return 0


commands.register("train")(
    Command(
        "short online RL refinement (grpo, rredcot, rrpo, srpo) with checkpoints and stored metrics",
        _configure_train,
        _run_train,
    )
)
