"""``probe fit`` / ``probe eval``: a value probe for the loaded model (docs/method.md §6.1, docs/guide.md).

``fit`` labels the segment states of a trace set with Monte Carlo (``--traces FILE``: drawn now, rollouts
stored) or reads the labels of a compare-bench file (``--labels FILE``: its per-rollout outcomes), splits the
problems into fit and held-out, chooses layer and L2 by cross-validation grouped by problem on the fit split,
and writes the probe to the data folder, where ``analyze --estimator probe`` finds it. ``eval`` reports a probe's
figures on a labelled set, leaving out the traces it was fitted on.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, replace
from pathlib import Path

from rredcot_viz.cli.analysis_commands import (
    add_analysis_arguments,
    add_segmenter_arguments,
    analysis_config,
    build_segmenter,
    select_traces,
)
from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.cli.model_commands import add_model_arguments, load_from_args, sampler_from_args
from rredcot_viz.cli.options import (
    add_folder_arguments,
    add_input_arguments,
    add_settings_arguments,
    at_least_one,
    settings_from_args,
)
from rredcot_viz.segmenters.base import DEFAULT_SEGMENTER

MC_ALIASES = {"rollouts": ("--mc-rollouts",), "max_new_tokens": ("--mc-max-tokens",)}


def _configure(parser: argparse.ArgumentParser) -> None:
    from rredcot_viz.estimators.montecarlo import PRESETS, MonteCarloConfig

    parser.add_argument("action", choices=("fit", "eval"), help="fit a probe, or evaluate the loaded model's one")
    parser.add_argument(
        "--labels", help="a compare-bench file (bench/compare.py's --out) whose traces hold per-rollout outcomes"
    )
    parser.add_argument("file", nargs="?", help="traces to label by Monte Carlo, in any supported format")
    add_input_arguments(parser)
    add_folder_arguments(parser)
    parser.add_argument("--trace", action="append", help="trace id, short hash or 0-based index (repeatable)")
    parser.add_argument("--limit", type=at_least_one, default=None, help="use at most this many traces")
    add_segmenter_arguments(parser, default=None)
    add_analysis_arguments(parser)
    add_settings_arguments(parser, [MonteCarloConfig], prefix="mc", initial=PRESETS["cpu_quick"], aliases=MC_ALIASES,
                           title="Monte Carlo labels (with a trace file; default: the cpu_quick preset)")  # fmt: skip
    parser.add_argument("--heldout", type=float, default=0.3, help="share of problems held out before fitting")
    parser.add_argument("--seed", type=int, default=0, help="seed of the problem split and the CV folds")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds (grouped by problem)")
    parser.add_argument("--probe-file", help="fit: where to write (default: the data folder); eval: which probe")
    add_model_arguments(parser, sampling=True)


def _segmenter(args: argparse.Namespace):
    """The chosen segmenter; with ``--labels`` and none chosen, the bench file's own (its labels are its states')."""
    if args.segmenter is None and args.labels:
        protocol = json.loads(Path(args.labels).read_text()).get("protocol", {})
        args.segmenter = protocol.get("segmenter", "fixed_tokens")
        if not getattr(args, "setting:seg:k", None) and protocol.get("k"):
            setattr(args, "setting:seg:k", str(protocol["k"]))
    args.segmenter = args.segmenter or DEFAULT_SEGMENTER
    return build_segmenter(args)


def _data(args: argparse.Namespace, lm, bars: ProgressBars):
    """The labelled states and their hidden states, from ``--labels`` or Monte Carlo on the trace file."""
    from rredcot_viz.engine import Analyzer
    from rredcot_viz.errors import ConfigError
    from rredcot_viz.estimators.montecarlo import PRESETS, MonteCarloConfig
    from rredcot_viz.scoring import BoundaryCache
    from rredcot_viz.store import Store
    from rredcot_viz.workflows.probe import hidden_features, labels_from_bench, labels_from_mc

    if bool(args.labels) == bool(args.file):
        raise ConfigError("give either a trace file (labels drawn by Monte Carlo) or --labels BENCH.json, not both")
    segmenter = _segmenter(args)
    config = analysis_config(args)
    if args.labels:
        config = replace(config, scope="whole")  # the compare bench cuts the whole response
    analyzer = Analyzer(lm, config, cache=BoundaryCache(backend=Store()), sampler=sampler_from_args(args, lm))
    if args.labels:
        examples, source = labels_from_bench(analyzer, args.labels, segmenter), f"file {Path(args.labels).name}"
    else:
        mc = asdict(PRESETS["cpu_quick"]) | settings_from_args(args, MonteCarloConfig, prefix="mc")
        examples = labels_from_mc(analyzer, select_traces(args), segmenter, mc, bars.callback("Monte Carlo labels"))
        source = f"mc({mc['rollouts']}) on {Path(args.file).name}"
    bars.close()
    data = hidden_features(analyzer, examples, f"{source}, {segmenter.name}", bars.callback("hidden states"))
    bars.close()
    return data


def _run(args: argparse.Namespace) -> int:
    from rredcot_viz.estimators.value_probe import ValueProbe, require_probe
    from rredcot_viz.workflows.probe import evaluate, fit, save_probe

    lm = load_from_args(args)
    bars = ProgressBars()
    if args.action == "fit":
        data = _data(args, lm, bars)
        probe = fit(data, lm, args.heldout, args.seed, args.folds)
        path = save_probe(probe, args.probe_file)
        print(f"value probe for {lm.name} ({probe.precision}): {probe.describe()}")
        print("  " + "  ".join(f"{k}={v}" for k, v in probe.metrics.items()))
        print(f"wrote {path}; analyze with --estimator probe")
        return 0
    probe = ValueProbe.load(args.probe_file) if args.probe_file else require_probe(lm)
    data = _data(args, lm, bars)
    seen = set(probe.training.get("trace_hashes", []))
    unseen = [i for i, e in enumerate(data.examples) if e.trace.content_hash not in seen]
    print(f"value probe {probe.describe()}; {len(data.examples) - len(unseen)} of {len(data.examples)} traces were "
          "fitted on and are left out")  # fmt: skip
    if not unseen:
        print("nothing held out to evaluate on")
        return 1
    figures = evaluate(probe, data.subset(unseen))
    print("  ".join(f"{k}={v:g}" for k, v in figures.items()))
    return 0


HELP = "fit a value probe on Monte Carlo labels (probe fit), or report its held-out figures (probe eval)"
commands.register("probe")(Command(HELP, _configure, _run))
