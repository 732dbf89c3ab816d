"""``train``: a short online RL refinement, headless, logged to the store with checkpoints."""

from __future__ import annotations

import argparse

from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.cli.model_commands import add_model_arguments, load_from_args
from rredcot_viz.cli.options import add_settings_arguments, given_setting, settings_from_args
from rredcot_viz.errors import ConfigError


def _configure_train(parser: argparse.ArgumentParser) -> None:
    from rredcot_viz.training import PRESETS, methods

    parser.add_argument("--preset", choices=list(PRESETS), help="default quick")
    parser.add_argument(
        "--problems",
        help="problems with reference answers in any importable format (GSM8K JSONL, "
        "...); default: the built-in arithmetic task",
    )
    parser.add_argument("--resume", metavar="RUN_ID", help="continue this run from its last checkpoint")
    parser.add_argument("--no-store", action="store_true", help="do not log to the DuckDB store")
    add_model_arguments(parser)
    add_settings_arguments(
        parser, {name: methods.get(name).Config for name in methods.names()}, title="training settings"
    )


def _run_train(args: argparse.Namespace) -> int:
    from rredcot_viz.store import Store
    from rredcot_viz.traces.importers import import_file
    from rredcot_viz.training import DEFAULT_METHOD, PRESETS, method_config_type, problems_from_traces
    from rredcot_viz.workflows.train import checkpoint_root, new_run_id, resumed_config, run_training

    if args.resume:  # the stored config wins; only what was asked explicitly is checked against it
        if args.preset:
            raise ConfigError("--preset cannot change a run being resumed; drop it (the stored config is used)")
        stored = resumed_config(args.resume)
        config = resumed_config(args.resume, settings_from_args(args, type(stored)))
    else:
        method = given_setting(args, "method") or DEFAULT_METHOD
        overrides = settings_from_args(args, method_config_type(method))
        config = PRESETS[args.preset or "quick"](**{**overrides, "method": method})
    problems = None
    if args.problems:
        pool = problems_from_traces(import_file(args.problems).traces)
        problems = (pool[config.eval_problems :], pool[: config.eval_problems])
    store = None if args.no_store else Store()
    run_id = args.resume or new_run_id(config)
    where = f"logged to {store.path}" if store is not None else "not logged (--no-store)"
    print(f"run {run_id}: {config.method}, {config.steps} steps; checkpoints in {checkpoint_root(run_id)}, {where}. "
          f"Resume with `train --resume {run_id}`; Ctrl-C or SIGTERM stops it.", flush=True)  # fmt: skip
    bars = ProgressBars()

    def show(metrics: dict) -> None:
        if "held_out_accuracy" in metrics:
            bars.write(
                f"step {metrics['step']:3d}: held-out accuracy {metrics['held_out_accuracy']:.3f}"
                + (f", reward {metrics['reward_mean']:.3f}, {metrics['seconds']:.1f} s/step" if metrics["step"] else "")
            )

    run_id, history = run_training(
        load_from_args(args),
        config,
        store,
        problems,
        run_id=run_id,
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
        "short online RL refinement (--method: every registered training method) with checkpoints and stored metrics",
        _configure_train,
        _run_train,
    )
)
