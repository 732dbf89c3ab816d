"""``analyze-dataset``: batch analysis sharded across processes with accelerate (one model replica each).

accelerate launch --num_processes 8 -m rredcot_viz analyze-dataset FILE --out DIR   # 8 GPUs
torchrun --nproc_per_node 2 -m rredcot_viz analyze-dataset FILE --out DIR           # 2 CPU processes
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rredcot_viz.cli.analysis_commands import (
    add_method_arguments,
    add_trace_arguments,
    analysis_config,
    build_methods,
    format_table,
    select_traces,
)
from rredcot_viz.cli.command import Command, ProgressBars, commands
from rredcot_viz.cli.model_commands import add_model_arguments, analyzer_from_args
from rredcot_viz.files import check_output_folder


def _configure(parser: argparse.ArgumentParser) -> None:
    add_trace_arguments(parser)
    add_method_arguments(parser)
    parser.add_argument("--out", required=True, help="output folder: part files, merged.parquet, throughput")
    parser.add_argument("--flush-every", type=int, default=8, help="traces per part file (the resume granularity)")
    parser.add_argument("--agreement", default="", help="comma list of methods to correlate sigma with (e.g. loo)")
    parser.add_argument("--no-store", action="store_true", help="do not import the merged result into the store")
    parser.add_argument("--label", help="name of the stored dataset run (default: the file name)")
    add_model_arguments(parser, sampling=True)


def _run(args: argparse.Namespace) -> int:
    import torch
    from accelerate import PartialState

    from rredcot_viz.errors import RredcotError
    from rredcot_viz.store import Store
    from rredcot_viz.workflows import batch
    from rredcot_viz.workflows.analyze import check_traces

    check_output_folder(args.out)
    store = None if args.no_store else Store()  # now, not after the work: a store that cannot be opened stops here
    state = PartialState(cpu=not torch.cuda.is_available())
    if state.num_processes > 1 and str(state.device).startswith("cuda"):
        args.device = str(state.device)  # one replica per GPU
    traces = select_traces(args)
    segmenter, estimator = build_methods(args)
    check = check_traces(traces, estimator)  # before the model loads: a run no trace can feed never starts
    for line in check.lines():
        print(line)
    check.require()
    analyzer = analyzer_from_args(args, analysis_config(args))
    label = args.label or Path(args.file).name
    run_id = None
    if store is not None and state.is_main_process:
        run_id = start_run(store, analyzer.lm.info(), segmenter, estimator, traces, label)
        if run_id is None:
            return 0
    try:
        merged = _analyze(args, state, analyzer, traces, segmenter, estimator)
    except BaseException as error:  # Ctrl-C and SIGTERM included: the run says how it ended; part files stay
        if run_id is not None:
            status = "stopped" if isinstance(error, KeyboardInterrupt) else "failed"
            store.finish_run(run_id, status, {"label": label, "error": str(error)[:300]}, {})
            again = "" if isinstance(error, RredcotError) else f"; the same command resumes from {args.out}'s parts"
            print(f"dataset run {run_id} {status}{again}", flush=True)
        raise
    if merged is None:
        return 0
    failed = merged["error"].notna()
    if len(merged) and failed.all():
        reason = str(merged["error"][failed].iloc[0])
        if run_id is not None:
            store.finish_run(run_id, "failed", {"label": label, "error": reason[:300]}, {})
        print(f"none of the {len(merged)} traces could be analysed (nothing stored); the first said: {reason}")
        return 2
    if failed.any():
        print(f"{int(failed.sum())} of {len(merged)} traces could not be analysed (their rows hold why)")
    if store is not None:
        batch.import_merged(store, merged, analyzer.lm.info(), segmenter, estimator, label, run_id)
        print(f"stored as dataset run {run_id} (open it on the Dataset page)")
    return 0


def start_run(store, model_info: dict, segmenter, estimator, traces: list, label: str) -> str | None:
    """Record the run as started under the id its analysis names, or say why not: None when this analysis is
    already stored (a rerun reuses it); a ``ConfigError`` when another live process is computing it now."""
    from rredcot_viz.errors import ConfigError
    from rredcot_viz.workflows.dataset import dataset_run_id, settings_of

    settings = settings_of(segmenter, estimator, label)
    run_id = dataset_run_id(model_info, settings, [t.content_hash for t in traces])
    existing = store.run(run_id)  # a run left running by a dead process is closed as interrupted first
    if existing is not None and existing["status"] == "done":
        print(
            f"this analysis is already stored as dataset run {run_id} ({len(traces)} traces, same model, settings "
            f"and label): nothing to do. Open it on the Dataset page; --label NAME stores it again under another name"
        )
        return None
    if existing is not None and existing["status"] == "running":
        raise ConfigError(
            f"another process is computing this same analysis now (dataset run {run_id}); wait for it to finish "
            "(its result is stored as that run) or stop it, then run this again"
        )
    store.put_run(run_id, "dataset", model_info, settings, None)
    return run_id


def _analyze(args: argparse.Namespace, state, analyzer, traces: list, segmenter, estimator):
    """This process's shard, then (on the main process) the merged result of all shards; None elsewhere."""
    from rredcot_viz.workflows import batch

    out = Path(args.out)
    mine = batch.shard(traces, state.process_index, state.num_processes)
    bars = ProgressBars()
    label = f"process {state.process_index}/{state.num_processes}"
    throughput = batch.run_shard(
        analyzer,
        mine,
        segmenter,
        estimator,
        out,
        rank=state.process_index,
        flush_every=args.flush_every,
        agreement_with=tuple(m for m in args.agreement.split(",") if m),
        progress=bars.callback(label) if state.is_local_main_process else None,
    )
    bars.close()
    print(
        f"{label}: {throughput['traces']} traces ({throughput['skipped']} already done), "
        f"{throughput['traces_per_s']} traces/s, {throughput['tokens_per_s']} tokens/s",
        flush=True,
    )
    state.wait_for_everyone()
    if not state.is_main_process:
        return None
    merged = batch.merge_parts(out, traces)
    print(format_table(batch.throughputs(out), "{:.3f}"))
    print(f"merged {len(merged)} traces into {out / batch.MERGED}")
    return merged


commands.register("analyze-dataset")(
    Command("batch analysis sharded across processes/GPUs with accelerate; resumable", _configure, _run)
)
