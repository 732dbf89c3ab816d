"""Does RREDCoT's per-segment credit agree with Monte Carlo where it matters? Estimators, attributions and
controls against an MC(16) reference, on traces where MC has something to say (embedded model, CPU).

Traces: the model's own sampled solutions (T 0.7, up to 512 new tokens) on built-in one-operation problems
(on the two-operation kind its pass rate was 0.03, so none would be in band), drawn with ``--seed`` from a pool
that leaves out every problem of the earlier protocol's seed (``--exclude-seed``: the traces that chose
today's defaults). Each problem gets ``--screen`` samples; a problem with a pass rate in [0.2, 0.8] gives one
correct and one failed trace: the first, in seed order, that ends by stating its answer after at least
``--min-lines`` - 1 lines of working. Before anything is scored, each problem (both its traces) is assigned to
the **selection** or the **evaluation** split by a seeded hash of its question (``--split-seed``).

Segments: ``--segmenter`` (with ``--k``) over the whole response, so the last segment is the one that writes
the answer. Reference: MC with 16 rollouts per state (up to ``--mc-max-tokens`` new tokens, T 0.7). A trace is
usable when it has >= 3 segments and its MC sigma is not constant over the non-final segments; the headline
uses the usable traces with >= ``--min-nonfinal`` non-final segments (a trace with two non-final segments can
only score +1 or -1, a sign test), and pairwise-order agreement pools every ordered pair of non-final segments
of every usable trace (a trace with m non-final segments gives m(m-1)/2 pairs).

Rows: Q-hat (RREDCoT) for each v-hat proposal and aggregation, R-hat alone, v-hat alone, LOO, Shapley,
gradient x input and attention (each with the trace's own answer as target, the default and the paper's
quantity, and with the reference answer), and MC with n = 1, 2, 4 rollouts independent of the reference.
Controls on the same segments: last-segment-only, position (credit = the segment's index, so later segments
always get more) and random. The Q-hat setting is **chosen on the selection split** (pairwise-order agreement,
non-final) and reported on the evaluation split beside the library's default; both splits are printed.
A row beats the controls when the paired bootstrap interval of (row - control) is above 0 for each.
Cost per row: tokens (scored + generated) and seconds per trace, each method on a cold cache (seconds on one
thread: ``--workers`` processes of one thread score the traces, 2 by default for the 2 cores).

Sampling: ``--sampler`` (``local``, the default, or ``openai`` with ``--sampler-url`` etc.: an OpenAI-compatible
server such as vLLM on the same model, probed before the first request) draws the screening samples and every
Monte Carlo rollout; which one is part of the protocol, so a resumed run never mixes backends.

Resumable: every scored trace is written to ``--out`` at once; ``--resume`` continues a run with the same
protocol (more problems with a larger ``--problems``, the traces not yet scored), ``--minutes`` stops starting
traces after that long (never on a result; the splits are scored in turn, so both grow alike), and
``--report-from FILE`` prints the report and the last line again from a saved file, without the model.

Another model and another problem set (issue 42): ``--model KEY`` (a catalogue key, e.g. qwen2.5-coder-1.5b after
``fetch-model KEY --convert``) with ``--quantization none|8bit|4bit``, ``--dtype`` and ``--device`` (cpu, or cuda
on a GPU machine: ``bench/compare_cuda.sh``; asked on a CPU it refuses); ``--problems-from gsm8k`` (the problems
of ``../shared/data/gsm8k/test.jsonl`` in a seeded order, read at run time; Y* after ``####``, U* the rationale);
``--rows issue42`` scores only that issue's rows (RREDCoT at its defaults, R-hat alone, v-hat alone, LOO, MC(1)
and MC(2) after the reference's 16 rollouts, and the controls; no Shapley, gradient, attention or estimator
grid) and reports them bootstrapped by problem (both traces of a problem resampled together), with
``--segmenter hybrid`` (the library's default) at ``--k 6``. The model, its precision (dtype and quantization as
loaded), the problem set, the row set and the estimator's and segmenter's settings are part of the protocol.
With one worker every state's rollouts and every row's score are stored in ``--out`` as they are made (a trace
in progress is picked up at the state where it stopped), and ``--minutes`` stops between states.

Last line: ``traces_drawn traces_usable selection_traces evaluation_traces headline_traces
min_nonfinal_segments k_counts selected_qhat rredcot_spearman_nonfinal ... rredcot_pairs_nonfinal
position_pairs_nonfinal ... rredcot_beats_controls`` (the figures are on the evaluation split; see docs/BENCHES.md).
With ``--rows issue42``: ``model traces_scored problems mc_split_half rredcot_pairs rredcot_over_ceiling
rhat_only_pairs vhat_only_pairs position_pairs reverse_position_pairs mc2_pairs_at_equal_cost minutes_per_trace``
and then a few more (usable traces, RREDCoT's interval, LOO, MC(1), MC(2)'s tokens over RREDCoT's, precision).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from comparison.lean import lean_last_line, report_lean
from comparison.problems import problem_pool, screen_problems
from comparison.report import last_line, report, thought_anchors
from comparison.rows import PROBLEM_SOURCES, ROW_SETS, TraceResult, default_row
from comparison.saved import from_record, protocol_mismatch, protocol_of, save
from comparison.scoring import OutOfTime, RolloutStore, alternate_splits, scored_in_order

from rredcot_viz.cli.model_commands import add_sampler_arguments, sampler_from_args
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.traces.answers import GRADING

OUT = PROJECT_ROOT / "bench" / "out"


def check_device(device: str) -> None:
    """Refuse a CUDA run where there is no CUDA device, before anything is loaded."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(
            f"--device {device}: this machine has no CUDA device (torch.cuda.is_available() is False); the CUDA "
            "protocol runs on a GPU machine (bench/compare_cuda.sh); on a CPU leave --device out (cpu)"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=60, help="problems to screen (in all, when resuming)")
    parser.add_argument("--screen", type=int, default=16, help="samples per problem for its pass rate")
    parser.add_argument("--min-lines", type=int, default=3, help="a trace has at least this many non-empty lines")
    parser.add_argument("--segmenter", default="fixed_tokens", help="fixed_tokens: K equal chunks (word starts)")
    parser.add_argument("--k", type=int, default=6, help="the segmenter's target K (0: its default)")
    parser.add_argument("--min-nonfinal", type=int, default=4, help="headline traces have >= this many non-final")
    parser.add_argument("--mc-max-tokens", type=int, default=512)
    parser.add_argument("--seed", type=int, default=11, help="the problems and the screening samples")
    parser.add_argument("--exclude-seed", type=int, default=3, help="leave out this earlier protocol's problems")
    parser.add_argument("--split-seed", type=int, default=0, help="the selection / evaluation split")
    parser.add_argument("--minutes", type=float, default=0, help="start no trace after this long (0: no limit)")
    parser.add_argument(
        "--workers", type=int, default=2, help="processes scoring traces (one thread each; 1 = this process)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads with --workers 1")
    parser.add_argument("--model", default="embedded", help="a catalogue key (fetch-model KEY --convert first)")
    parser.add_argument("--quantization", default="none", choices=("none", "8bit", "4bit"), help="4bit: nf4")
    parser.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    parser.add_argument("--device", default="auto", help="auto, cpu, or cuda (refused where there is no GPU)")
    parser.add_argument("--problems-from", default="builtin", choices=PROBLEM_SOURCES, help="gsm8k: shared/data's")
    parser.add_argument("--rows", default="full", choices=ROW_SETS, help="issue42: that issue's rows only")
    parser.add_argument("--screen-chunk", type=int, default=4, help="--rows issue42: problems screened at a time")
    parser.add_argument("--note", default="", help="a note stored with the run (e.g. why this precision)")
    parser.add_argument("--out", type=Path, default=OUT / "compare_traces.json", help="the per-trace results")
    parser.add_argument("--resume", action="store_true", help="add to --out (same protocol) instead of starting anew")
    parser.add_argument(
        "--mc-from",
        metavar="JSON",
        type=Path,
        help="a saved run: its traces, Monte Carlo drawn again (same protocol), "
        "its rows that never sample carried over (a grader change redraws only what it can change)",
    )
    parser.add_argument("--ta-traces", type=int, default=0, help="Thought Anchors traces to compare (0 = skip)")
    parser.add_argument(
        "--report-from", metavar="JSON", type=Path, help="no model: the report and last line of a saved run again"
    )
    add_sampler_arguments(parser)
    args = parser.parse_args(argv)
    if args.report_from:
        saved = json.loads(args.report_from.read_text())
        results = [from_record(r) for r in saved["traces"]]
        print(f"re-read {len(results)} traces from {args.report_from}; the 'rredcot' row is {default_row()}")
        print(f"protocol: {json.dumps(saved['protocol'])}")
        if saved["protocol"].get("rows") == "issue42":
            print(lean_last_line(report_lean(results, saved), saved))
        else:
            print(last_line(report(results, saved["protocol"]["min_nonfinal"]), saved))
        return
    check_device(args.device)
    lean = args.rows == "issue42"
    if args.workers != 1 and (args.model != "embedded" or args.quantization != "none" or lean):
        raise SystemExit("--model, --quantization and --rows issue42 run in this process: use --workers 1")
    if args.workers == 1:
        torch.set_num_threads(args.threads)  # screening too, not only the traces
    started_all = time.perf_counter()
    args.deadline = started_all + 60 * args.minutes if args.minutes else float("inf")
    protocol = protocol_of(args)
    screened: list[dict] = []
    drawn: list[dict] = []
    results: list[TraceResult] = []
    carried: dict[str, dict] = {}
    kept: dict = {}  # what the saved file holds beside the traces (the trace in progress, timings, notes)
    if args.mc_from:  # the same drawn traces, Monte Carlo drawn again; the rows that never sample carried over
        source = json.loads(args.mc_from.read_text())
        mismatched = protocol_mismatch(source["protocol"], protocol)
        mismatched.pop("grading", None)
        if mismatched:
            raise SystemExit(f"--mc-from: {args.mc_from} was run with another protocol (saved, asked): {mismatched}")
        screened, drawn = source["screened"], source["drawn"]
        carried = {record["trace"]: record for record in source["traces"]}
        print(f"--mc-from {args.mc_from}: its {len(drawn)} drawn traces; Monte Carlo drawn again, graded {GRADING}")
    if args.resume and args.out.is_file():
        saved = json.loads(args.out.read_text())
        mismatched = protocol_mismatch(saved["protocol"], protocol)
        if mismatched:
            raise SystemExit(f"--resume: {args.out} was run with another protocol (saved, asked): {mismatched}")
        screened, drawn = saved["screened"], saved["drawn"]
        results = [from_record(r) for r in saved["traces"]]
        kept = {key: saved[key] for key in ("in_progress", "run") if key in saved}
        print(f"resuming {args.out}: {len(screened)} problems screened, {len(results)} of {len(drawn)} traces scored")
    config = ModelConfig(source=args.model, quantization=args.quantization, dtype=args.dtype, device=args.device)
    lm = LanguageModel.load(config)
    protocol["precision"] = f"{lm.dtype}/{lm.quantization}"  # as loaded: a resumed run never mixes precisions
    if args.resume and args.out.is_file():
        mismatched = protocol_mismatch(json.loads(args.out.read_text())["protocol"], protocol)
        if mismatched:
            raise SystemExit(f"--resume: {args.out} was run with another precision (saved, asked): {mismatched}")
    sampler = sampler_from_args(args, lm)
    run = kept.get("run", {}) | {"device": lm.device, "note": args.note or kept.get("run", {}).get("note", "")}
    run.setdefault("screen_seconds", 0.0)
    run.setdefault("sittings", [])
    run["sittings"].append({"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": lm.device})

    def write() -> None:
        save(args.out, protocol, screened, drawn, results, store.snapshot() if store else None, {"run": run})

    store = RolloutStore(kept.get("in_progress"), write, args.deadline) if args.workers == 1 else None
    write()
    pool = [] if args.mc_from else problem_pool(args.problems, args.seed, args.problems_from)
    stopped = ""
    while not stopped:
        done = {r.trace.trace_id for r in results}
        todo = alternate_splits([d | {"carried": carried.get(d["trace"])} for d in drawn if d["trace"] not in done])
        if len(screened) < len(pool) and (not lean or not todo):
            if time.perf_counter() > args.deadline:
                stopped = "the time budget (--minutes) ran out before screening more problems"
                break
            first = len(screened)
            upto = first + args.screen_chunk if lean else len(pool)
            started = time.perf_counter()
            new_screened, new_drawn = screen_problems(lm, sampler, pool[:upto], first, args)
            run["screen_seconds"] += time.perf_counter() - started
            screened, drawn = screened + new_screened, drawn + new_drawn
            rates = [s["pass_rate"] for s in new_screened]
            print(
                f"{lm.name}: screened {len(new_screened)} more {args.problems_from} problems x {args.screen} samples "
                f"(pass rates {', '.join(f'{r:.2f}' for r in rates)}); {sum(0.2 <= r <= 0.8 for r in rates)} in "
                f"[0.2, 0.8], {sum(s['excluded'] for s in new_screened)} left out as the earlier protocol's; "
                f"{len(new_drawn)} traces ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
            write()
            continue
        if not todo:
            break
        print(f"split before scoring: {Counter(d['split'] for d in drawn)}; {len(todo)} traces to score", flush=True)
        try:
            for count, (result, seconds) in enumerate(scored_in_order(lm, sampler, todo, args, store), 1):
                results.append(result)
                if store:
                    store.clear()
                write()
                nonfinal = result.k - 1
                status = "usable" if result.usable else ("K < 3" if result.k < 3 else "MC constant before the end")
                print(
                    f"[{count}/{len(todo)}] {result.trace.trace_id} ({result.split}): K={result.k} ({nonfinal} "
                    f"non-final) R={result.trace.outcome:.0f} MC values {np.round(result.reference_values, 2).tolist()}"
                    f" {status} ({seconds:.0f} s in this sitting, {result.wall_seconds:.0f} s in all)",
                    flush=True,
                )
        except OutOfTime:
            stopped = "the time budget (--minutes) ran out between two states; --resume goes on from there"
        if time.perf_counter() > args.deadline and not stopped:
            stopped = "the time budget (--minutes) ran out"
        if not lean:
            break
    write()
    print(f"\n{len(results)} of {len(drawn)} drawn traces scored ({time.perf_counter() - started_all:.0f} s)")
    if stopped:
        print(f"stopped: {stopped}")
    saved = json.loads(args.out.read_text())
    if lean:
        line = lean_last_line(report_lean(results, saved), saved)
        again = lean_last_line(report_lean([from_record(r) for r in saved["traces"]], saved, quiet=True), saved)
    else:
        headline = report(results, args.min_nonfinal)
        if args.ta_traces:
            thought_anchors(lm, args.ta_traces)
        line = last_line(headline, saved)
        again = last_line(report([from_record(r) for r in saved["traces"]], args.min_nonfinal, quiet=True), saved)
    if again != line:  # the saved file must give back exactly what was printed (--report-from relies on it)
        raise RuntimeError(f"the saved per-trace file does not reproduce the run:\n{line}\n{again}")
    print(f"(the saved file {args.out} reproduces this line with --report-from)")
    print(line)


if __name__ == "__main__":
    main()
