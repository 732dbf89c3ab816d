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

    from rredcot_viz.store import Store
    from rredcot_viz.workflows import batch

    check_output_folder(args.out)
    store = None if args.no_store else Store()  # now, not after the work: a store that cannot be opened stops here
    state = PartialState(cpu=not torch.cuda.is_available())
    if state.num_processes > 1 and str(state.device).startswith("cuda"):
        args.device = str(state.device)  # one replica per GPU
    traces = select_traces(args)
    segmenter, estimator = build_methods(args)
    analyzer = analyzer_from_args(args, analysis_config(args))
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
        return 0
    merged = batch.merge_parts(out, traces)
    print(format_table(batch.throughputs(out), "{:.3f}"))
    print(f"merged {len(merged)} traces into {out / batch.MERGED}")
    if store is not None:
        run_id = batch.import_merged(
            store, merged, analyzer.lm.info(), segmenter, estimator, args.label or Path(args.file).name
        )
        print(f"stored as dataset run {run_id} (open it on the Dataset page)")
    return 0


commands.register("analyze-dataset")(
    Command("batch analysis sharded across processes/GPUs with accelerate; resumable", _configure, _run)
)
