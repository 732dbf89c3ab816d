"""Does RREDCoT's per-segment credit agree with Monte Carlo where it matters? Estimators, attributions and
controls against an MC(16) reference, on traces where MC has something to say (embedded model, CPU).

Traces: the model's own sampled solutions (T 0.7, up to 512 new tokens) on built-in problems it solves
sometimes (the one-operation kinds: on the two-operation kind its pass rate was 0.03 over 16 problems x 8
samples, so none would be in band): each screened problem gets ``--screen`` samples; problems with a pass rate
in [0.2, 0.8] give one correct and one failed trace (the first, in seed order, with two or more lines of
working and that ends by stating its answer). Every trace is segmented by the app's default segmenter (hybrid)
over the whole response, so the last segment is the one that writes the answer; the reference is MC with 16
rollouts per state (up to 512 new tokens, T 0.7). A trace is usable when it has >= 3 segments and its MC sigma
is not constant over the non-final segments.

Rows: Q-hat (RREDCoT) for each v-hat proposal and aggregation, R-hat alone, v-hat alone, LOO, Shapley,
gradient x input, attention, and MC with n = 1, 2, 4 rollouts independent of the reference. Controls on the
same traces and segments: last-segment-only, position, random (100 seeded draws). Agreement is Spearman
and Kendall per trace, averaged with a bootstrap 95% interval, on the non-final segments (the headline: the
final segment writes the answer, and every estimator jumps there) and on all segments.
A row beats the controls when the paired bootstrap interval of (row - control) is above 0 for each.
Cost per row: tokens (scored + generated) and seconds per trace, each method run on a cold cache (seconds on
one thread: ``--workers`` processes of one thread score the traces, 2 by default for the 2 cores).

Last line: ``traces_drawn traces_usable mc_max_new_tokens rredcot_spearman_nonfinal rredcot_spearman_all
answer_only_spearman_nonfinal last_segment_spearman_all position_spearman_nonfinal random_spearman_nonfinal
rredcot_beats_controls tokens_mc16_over_rredcot mc_spearman_at_rredcot_budget`` (+ a few more).
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from workers import model_pool, worker_model

from rredcot_viz.attribution.agreement import pearson, per_trace_agreement, per_trace_control, spearman, value_at_budget
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.estimators.rredcot import RREDCoTConfig
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.paths import PROJECT_ROOT, shared_data_dir
from rredcot_viz.segmenters import segmenters
from rredcot_viz.stats import bootstrap_mean, paired_bootstrap_difference
from rredcot_viz.traces.answers import extract_answer, extract_answer_detailed
from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.sampler import problem_prompt
from rredcot_viz.training.task import BUILTIN_STOP, builtin_problems, reward
from rredcot_viz.workflows.compare import compare

OUT = PROJECT_ROOT / "bench" / "out"
REFERENCE_N = 16
MC_NS = (1, 2, 4)  # drawn after the reference's 16, so independent of it
PROPOSALS = ("remaining", "whole")
PATH_AGGREGATIONS = ("geo_mean", "seq_prob", "mean_prob")
CONTROLS = ("last_segment", "position", "random")


def estimator_rows() -> dict[str, tuple[str, dict]]:
    """Row name -> (estimator, options): Q-hat per v-hat setting, R-hat alone, v-hat alone."""
    rows: dict[str, tuple[str, dict]] = {"rredcot": ("rredcot", {})}  # the defaults
    default = RREDCoTConfig()
    for proposal in PROPOSALS:
        for aggregation in PATH_AGGREGATIONS:
            if (proposal, aggregation) != (default.path_proposal, default.path_aggregation):
                rows[f"rredcot[{proposal},{aggregation}]"] = (
                    "rredcot",
                    {"path_proposal": proposal, "path_aggregation": aggregation},
                )
    rows["answer_only"] = ("answer_only", {})
    rows["answer_only[mean_prob]"] = ("answer_only", {"aggregation": "mean_prob"})
    for proposal in PROPOSALS:
        for aggregation in PATH_AGGREGATIONS:
            rows[f"v_hat[{proposal},{aggregation}]"] = (
                "rredcot",
                {"alpha": 0.0, "path_proposal": proposal, "path_aggregation": aggregation},
            )
    return rows


ATTRIBUTIONS = ("loo", "shapley", "grad_x_input", "attention")


@dataclass
class TraceResult:
    trace: Trace
    k: int
    reference: np.ndarray  # MC(16) sigma
    reference_values: np.ndarray
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    tokens: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    truncated: int = 0
    rollouts: int = 0


def draw_traces(lm: LanguageModel, problems: int, screen: int, seed: int) -> tuple[list[Trace], list[float]]:
    """One correct and one failed sampled trace per problem the model solves sometimes, and every pass rate."""
    pool = [p for p in builtin_problems(3 * problems, seed=seed) if p.solution.count("\n") == 2][:problems]
    prompts = [problem_prompt(lm, p) for p in pool]
    ids = [lm.encode_prompt(text) for text in prompts]
    config = SamplingConfig(
        0.7, 0.95, max_new_tokens=512, stop_strings=BUILTIN_STOP, stop_on_answer=True, batch_size=64
    )
    rows = [(i, j) for i in range(len(pool)) for j in range(screen)]
    result = lm.sample([ids[i] for i, _ in rows], [seed * 100_000 + 100 * i + j for i, j in rows], config)
    traces, rates = [], []
    for i, problem in enumerate(pool):
        generations = result.generations[i * screen : (i + 1) * screen]
        rewards = [reward(g.text, problem.answer) for g in generations]
        rates.append(float(np.mean(rewards)))
        if not 0.2 <= rates[-1] <= 0.8:
            continue
        for wanted in (1.0, 0.0):
            pick = next(
                (g for g, r in zip(generations, rewards, strict=True) if r == wanted and steps_before_answer(g.text)),
                None,
            )
            if pick is not None:
                traces.append(
                    Trace(
                        question=problem.question,
                        cot=pick.text,
                        prompt=prompts[i],
                        reference_answer=problem.answer,
                        reference_solution=problem.solution,
                        correct=bool(wanted),
                        final_answer=extract_answer(pick.text),
                        source="generated",
                        trace_id=f"builtin-{i}-{'correct' if wanted else 'failed'}",
                        metadata={"generator": lm.name, "seed": pick.seed, "pass_rate": rates[-1]},
                    )
                )
    return traces, rates


def steps_before_answer(text: str) -> bool:
    """At least two lines of working, then the answer stated on the last line."""
    lines = [line for line in text.splitlines() if line.strip()]
    found = extract_answer_detailed(text)
    stated = found is not None and found.method != "last_number"
    return len(lines) >= 3 and stated and found.start > text.rstrip().rfind("\n")


def score_trace(lm: LanguageModel, trace: Trace, args: argparse.Namespace) -> TraceResult | None:
    """Every row on one trace, each on a cold cache (so its cost is its own); None when not usable."""
    segmenter = segmenters.get("hybrid")()
    analysis_config = AnalysisConfig(scope="whole", boundaries="segmenter")  # the answer line is the last segment
    mc_analyzer = Analyzer(lm, analysis_config)
    mc = estimators.get("mc")(
        rollouts=REFERENCE_N + max(MC_NS),
        max_new_tokens=args.mc_max_tokens,
        batch_size=REFERENCE_N + max(MC_NS),
        stop_strings=BUILTIN_STOP,
    )
    started = time.perf_counter()
    analysis = mc_analyzer.analyze(trace, segmenter, mc)
    mc_seconds = time.perf_counter() - started
    segmentation = analysis.segmentation
    context = mc_analyzer.context(trace)
    per_state = [mc.rollouts(context, prefix) for prefix in segmentation.state_prefixes[:-1]]
    outcome = float(trace.outcome)

    def mc_sigma(indices: range) -> np.ndarray:
        values = [np.mean([per_state[s][i].correct for i in indices]) for s in range(len(per_state))]
        return redistribute(np.append(values, outcome))

    reference = mc_sigma(range(REFERENCE_N))
    reference_values = np.append(
        [np.mean([r.correct for r in rollouts[:REFERENCE_N]]) for rollouts in per_state], outcome
    )
    result = TraceResult(trace, segmentation.k, reference, reference_values)
    result.truncated = sum(r.truncated for rollouts in per_state for r in rollouts[:REFERENCE_N])
    result.rollouts = REFERENCE_N * len(per_state)
    if segmentation.k < 3 or np.ptp(reference[:-1]) == 0:
        return result
    generated_all = sum(r.tokens for rollouts in per_state for r in rollouts)
    for n in (*MC_NS, REFERENCE_N):
        indices = range(REFERENCE_N, REFERENCE_N + n) if n in MC_NS else range(REFERENCE_N)
        name = f"mc{n}" if n in MC_NS else "mc16"
        result.scores[name] = mc_sigma(indices)
        generated = sum(rollouts[i].tokens for rollouts in per_state for i in indices)
        result.tokens[name] = len(context.ids) + generated  # one prefill of the trace, then the rollouts
        result.seconds[name] = mc_seconds * generated / max(generated_all, 1)
    for row, (name, options) in estimator_rows().items():
        analysis = Analyzer(lm, analysis_config).analyze(trace, segmenter, estimators.get(name)(**options))
        if analysis.segmentation.cuts != segmentation.cuts:
            raise RuntimeError(f"{row} segmented {trace.trace_id} differently from MC")
        result.scores[row] = analysis.sigma
        result.tokens[row] = analysis.cost.tokens_processed + analysis.cost.tokens_generated
        result.seconds[row] = analysis.cost.seconds
    for name in ATTRIBUTIONS:
        analyzer = Analyzer(lm, analysis_config)
        before = lm.meter.total
        started = time.perf_counter()
        comparison = compare(analyzer, trace, segmenter, [name])
        cost = lm.meter.total - before
        result.scores[name] = comparison.methods[name].scores
        result.tokens[name] = cost.tokens_processed + cost.tokens_generated
        result.seconds[name] = time.perf_counter() - started
    return result


def scored_in_order(
    lm: LanguageModel, traces: list[Trace], args: argparse.Namespace
) -> Iterator[tuple[TraceResult, float]]:
    """Each trace's result and its seconds, in the traces' order. With ``--workers N`` the traces are scored by N
    processes of one thread each (a small model's batched sampling gains little from a second thread); results
    still come in order, so the caller's stopping rule picks the same traces as a single process would."""
    if args.workers == 1:
        for trace in traces:
            started = time.perf_counter()
            yield score_trace(lm, trace, args), time.perf_counter() - started
        return
    pool = model_pool(args.workers)
    waiting = iter(traces)
    running: deque = deque()
    for trace in itertools.islice(waiting, args.workers + 1):  # one queued, so no worker waits for the reader
        running.append(pool.submit(_score_in_worker, trace, args))
    try:
        while running:
            yield running.popleft().result()
            for trace in itertools.islice(waiting, 1):
                running.append(pool.submit(_score_in_worker, trace, args))
    finally:  # enough traces: the ones still being scored are not needed
        pool.shutdown(wait=False, cancel_futures=True)
        for process in multiprocessing.active_children():
            process.terminate()


def _score_in_worker(trace: Trace, args: argparse.Namespace) -> tuple[TraceResult, float]:
    started = time.perf_counter()
    return score_trace(worker_model(), trace, args), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=40, help="built-in problems to screen")
    parser.add_argument("--screen", type=int, default=8, help="samples per problem for its pass rate")
    parser.add_argument("--usable", type=int, default=26, help="stop once this many usable traces are scored")
    parser.add_argument("--mc-max-tokens", type=int, default=512)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--workers", type=int, default=2, help="processes scoring traces (one thread each; 1 = this process)"
    )
    parser.add_argument("--ta-traces", type=int, default=0, help="Thought Anchors traces to compare (0 = skip)")
    parser.add_argument(
        "--report-from",
        metavar="JSON",
        help="no model: print the tables again from a run's compare_traces.json, the row 'rredcot' being today's "
        "default (e.g. after the default changed)",
    )
    args = parser.parse_args()
    if args.report_from:
        report_again(json.loads(Path(args.report_from).read_text()))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    started_all = time.perf_counter()
    lm = LanguageModel.load()
    traces, rates = draw_traces(lm, args.problems, args.screen, args.seed)
    in_band = sum(0.2 <= r <= 0.8 for r in rates)
    print(
        f"{lm.name}: screened {len(rates)} built-in problems x {args.screen} samples "
        f"(pass rates {', '.join(f'{r:.2f}' for r in rates)}); {in_band} in [0.2, 0.8] gave {len(traces)} traces "
        f"({time.perf_counter() - started_all:.0f} s)",
        flush=True,
    )
    results: list[TraceResult] = []
    drawn = 0
    for result, seconds in scored_in_order(lm, traces, args):
        drawn += 1
        results.append(result)
        status = "usable" if result.scores else ("K < 3" if result.k < 3 else "MC constant before the end")
        print(
            f"[{drawn}/{len(traces)}] {result.trace.trace_id}: K={result.k} R={result.trace.outcome:.0f} "
            f"MC values {np.round(result.reference_values, 2).tolist()} {status} ({seconds:.0f} s)",
            flush=True,
        )
        if sum(bool(r.scores) for r in results) >= args.usable:
            break
    usable = [r for r in results if r.scores]
    nonconstant_all = sum(np.ptp(r.reference) > 0 for r in results)
    truncated = sum(r.truncated for r in results) / max(sum(r.rollouts for r in results), 1)
    (OUT / "compare_traces.json").write_text(
        json.dumps(
            [
                {
                    "trace": r.trace.trace_id,
                    "cot": r.trace.cot,
                    "outcome": r.trace.outcome,
                    "k": r.k,
                    "mc16_values": r.reference_values.tolist(),
                    "scores": {name: v.tolist() for name, v in r.scores.items()},
                    "tokens": r.tokens,
                    "seconds": r.seconds,
                    "rredcot_is": default_row(),
                    "mc_max_new_tokens": args.mc_max_tokens,
                    "truncated": r.truncated,
                    "rollouts": r.rollouts,
                }
                for r in results
            ],
            indent=1,
        )
    )
    print(
        f"\ntraces drawn {drawn}, MC(16) sigma non-constant on {nonconstant_all}, usable {len(usable)} "
        f"(>= 3 segments, MC not constant before the final segment); MC rollouts <= {args.mc_max_tokens} new "
        f"tokens, {100 * truncated:.1f}% of the reference's rollouts hit the cap"
    )
    headline = report(usable)
    if args.ta_traces:
        thought_anchors(lm, args.ta_traces)
    print(f"\n{time.perf_counter() - started_all:.0f} s in all")
    print(
        f"traces_drawn={drawn} traces_usable={len(usable)} mc_max_new_tokens={args.mc_max_tokens} "
        + " ".join(f"{key}={value}" for key, value in headline.items())
    )


def default_row() -> str:
    """The ablation row that the 'rredcot' row (the estimator's defaults) equals."""
    default = RREDCoTConfig()
    return f"rredcot[{default.path_proposal},{default.path_aggregation}]"


def report_again(records: list[dict]) -> None:
    """The tables of a finished run from its saved per-trace scores, with 'rredcot' meaning today's defaults.
    A file written before the run recorded its default row had v-hat's earlier default (remaining, geo_mean)."""
    results = []
    for record in records:
        trace = Trace("(not saved)", record["cot"], correct=bool(record["outcome"]), trace_id=record["trace"])
        result = TraceResult(trace, record["k"], np.asarray(record["scores"].get("mc16", [])), np.array([]))
        result.scores = {name: np.asarray(v) for name, v in record["scores"].items()}
        result.tokens, result.seconds = dict(record["tokens"]), dict(record["seconds"])
        result.truncated, result.rollouts = record.get("truncated", 0), record.get("rollouts", 0)
        was, now = record.get("rredcot_is", "rredcot[remaining,geo_mean]"), default_row()
        if was != now and now in result.scores:
            for table in (result.scores, result.tokens, result.seconds):
                table[was], table["rredcot"] = table.pop("rredcot"), table.pop(now)
        results.append(result)
    usable = [r for r in results if r.scores]
    max_tokens = records[0].get("mc_max_new_tokens", 512)
    print(f"re-read {len(records)} traces ({len(usable)} usable); the 'rredcot' row is {default_row()}")
    headline = report(usable)
    print(
        f"traces_drawn={len(records)} traces_usable={len(usable)} mc_max_new_tokens={max_tokens} "
        + " ".join(f"{key}={value}" for key, value in headline.items())
    )


def summary(values: np.ndarray) -> tuple[float, float, float, int]:
    defined = values[~np.isnan(values)]
    low, high = bootstrap_mean(defined)
    return (float(defined.mean()) if len(defined) else float("nan")), low, high, len(defined)


def report(usable: list[TraceResult]) -> dict[str, str]:
    """Print the agreement, ablation and budget tables; return the headline key=value figures."""
    references = [r.reference for r in usable]
    rows = [name for name in usable[0].scores if name != "mc16"]
    agreement = {
        (name, metric, final): per_trace_agreement([r.scores[name] for r in usable], references, metric, final=final)
        for name in rows
        for metric in ("spearman", "kendall")
        for final in (False, True)
    }
    for control in CONTROLS:
        for metric in ("spearman", "kendall"):
            for final in (False, True):
                agreement[(control, metric, final)] = per_trace_control(control, references, metric, final=final)
    tokens = {name: float(np.mean([r.tokens[name] for r in usable])) for name in [*rows, "mc16"]}
    seconds = {name: float(np.mean([r.seconds[name] for r in usable])) for name in [*rows, "mc16"]}
    mc_curve = (
        [tokens[f"mc{n}"] for n in MC_NS],
        [float(np.nanmean(agreement[(f"mc{n}", "spearman", False)])) for n in MC_NS],
    )

    def beats(name: str, final: bool) -> bool:
        controls = CONTROLS if final else ("position", "random")
        return all(
            paired_bootstrap_difference(agreement[(name, "spearman", final)], agreement[(c, "spearman", final)])[1] > 0
            for c in controls
        )

    print(
        "\nAgreement with MC(16) sigma, per trace then averaged (95% bootstrap over traces; n = traces where "
        "both vectors vary). Non-final = without the last segment (the one that writes the answer)."
    )
    header = (
        f"{'row':30s} {'Spearman non-final':>27s} {'Kendall nf':>10s} {'Spearman all':>27s} "
        f"{'beats controls nf/all':>21s} {'tokens/trace':>12s} {'s/trace':>8s} {'MC at budget':>12s}"
    )
    print(header)
    for name in [*rows, *CONTROLS]:
        nf, al = summary(agreement[(name, "spearman", False)]), summary(agreement[(name, "spearman", True)])
        kendall = summary(agreement[(name, "kendall", False)])[0]
        if name in CONTROLS:
            verdict, cost, budget = "(control)", f"{'-':>12s} {'-':>8s}", "-"
        else:
            verdict = f"{'yes' if beats(name, False) else 'no'}/{'yes' if beats(name, True) else 'no'}"
            at, how = value_at_budget(*mc_curve, tokens[name])
            cost = f"{tokens[name]:12.0f} {seconds[name]:8.2f}"
            budget = f"{at:+.3f}{'*' if how == 'clamped' else ''}"
        print(f"{name:30s} {fmt(nf):>27s} {kendall:+10.3f} {fmt(al):>27s} {verdict:>21s} {cost} {budget:>12s}")
    print(
        f"{'mc16 (the reference)':30s} {'':>27s} {'':>10s} {'':>27s} {'':>21s} {tokens['mc16']:12.0f} "
        f"{seconds['mc16']:8.2f}"
    )
    print("* clamped: the budget lies outside MC's measured n = 1..4 (read at the nearest end)")
    gain = paired_bootstrap_difference(
        agreement[("rredcot", "spearman", False)], agreement[("answer_only", "spearman", False)]
    )
    print(
        f"\nwhat v-hat adds (RREDCoT minus R-hat alone, non-final Spearman, paired): {gain[0]:+.3f} "
        f"[{gain[1]:+.3f}, {gain[2]:+.3f}] over {gain[3]} traces"
    )
    q_rows = [name for name in rows if name.startswith("rredcot")]
    best_q = max(q_rows, key=lambda name: np.nanmean(agreement[(name, "spearman", False)]))
    print(f"best Q-hat setting on non-final segments: {best_q}")
    rredcot_budget = value_at_budget(*mc_curve, tokens["rredcot"])
    mean = lambda key: float(np.nanmean(agreement[key]))  # noqa: E731
    return {
        "rredcot_spearman_nonfinal": f"{mean(('rredcot', 'spearman', False)):.3f}",
        "rredcot_spearman_all": f"{mean(('rredcot', 'spearman', True)):.3f}",
        "answer_only_spearman_nonfinal": f"{mean(('answer_only', 'spearman', False)):.3f}",
        "last_segment_spearman_all": f"{mean(('last_segment', 'spearman', True)):.3f}",
        "position_spearman_nonfinal": f"{mean(('position', 'spearman', False)):.3f}",
        "random_spearman_nonfinal": f"{mean(('random', 'spearman', False)):.3f}",
        "rredcot_beats_controls": str(int(beats("rredcot", False))),
        "tokens_mc16_over_rredcot": f"{tokens['mc16'] / tokens['rredcot']:.1f}",
        "mc_spearman_at_rredcot_budget": f"{rredcot_budget[0]:.3f}",
        "mc_budget_clamped": str(int(rredcot_budget[1] == "clamped")),
        "vhat_gain_nonfinal": f"{gain[0]:+.3f}",
        "best_qhat": best_q,
    }


def fmt(summary_: tuple[float, float, float, int]) -> str:
    mean, low, high, n = summary_
    return f"{mean:+.3f} [{low:+.2f}, {high:+.2f}] n={n}"


def thought_anchors(lm: LanguageModel, count: int) -> None:
    """Our estimates on Thought Anchors' own chunks vs their published MC values (shortest traces first)."""
    path = shared_data_dir() / "traces" / "thought_anchors_r1distill_traces.jsonl"
    if not path.is_file():
        print(f"\nThought Anchors comparison skipped: {path} is absent")
        return
    traces = sorted(import_file(path).traces, key=lambda t: len(t.cot))[:count]
    analyzer = Analyzer(lm, AnalysisConfig(boundaries="states"))
    given = segmenters.get("given")()
    print(
        f"\nThought Anchors: {count} shortest traces, our estimates on their chunks vs published MC (~100 "
        "rollouts of an 8-14B R1-distill model); a 135M model is expected to disagree"
    )
    for trace in traces:
        published = analyzer.analyze(trace, given, estimators.get("published_mc")())
        ours = analyzer.analyze(trace, given, estimators.get("rredcot")())
        answer = analyzer.analyze(trace, given, estimators.get("answer_only")())
        ta_sigma = np.asarray(trace.step_scores["ta_resampling_importance"], dtype=float)
        published_values = published.values.values[:-1]
        print(
            f"  {trace.trace_id}: K={published.k} R={trace.outcome} "
            f"spearman(sigma rredcot, TA resampling importance)={spearman(ours.sigma[:-1], ta_sigma[:-1]):+.3f} "
            f"pearson(R-hat curve, TA accuracy)={pearson(answer.values.values[:-1], published_values):+.3f} "
            f"pearson(Q-hat curve, TA accuracy)={pearson(ours.values.values[:-1], published_values):+.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
