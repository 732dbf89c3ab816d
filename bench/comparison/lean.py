"""Issue 42's report (``--rows issue42``): the lean rows, every interval bootstrapped by problem."""

from __future__ import annotations

import numpy as np

from comparison.report import CONTROL_NAMES, Table, fmt, k_counts, mechanism, summary
from comparison.rows import REFERENCE_N, TraceResult
from comparison.stats import bootstrap_ratio
from comparison.stats import paired_bootstrap_ratio_difference as ratio_difference

LEAN_ROWS = ("rredcot", "answer_only", "v_hat[whole,geo_mean]", "loo", "mc1", "mc2")
SMALL_CREDIT = 0.01  # a change in the probability of the right answer that a user would not read as a step's credit
RISEN = 0.1  # R-hat above s_1's by this much before the answer is written: the model "sees the answer coming"
LEAN_NAMES = {"rredcot": "RREDCoT (defaults)", "answer_only": "R-hat alone", "v_hat[whole,geo_mean]": "v-hat alone",
              "loo": "LOO", "mc1": "MC(1)", "mc2": "MC(2)"}  # fmt: skip


def by_problem(results: list[TraceResult], counts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per-trace (agreeing, pairs) summed per problem: the bootstrap then resamples problems, both traces of a
    problem together (a pooled ratio's per-problem sums are all a resampled problem contributes)."""
    problems = sorted({r.problem for r in results})
    where = {problem: i for i, problem in enumerate(problems)}
    agreeing, pairs = np.zeros(len(problems)), np.zeros(len(problems))
    for result, a, b in zip(results, *counts, strict=True):
        agreeing[where[result.problem]] += a
        pairs[where[result.problem]] += b
    return agreeing, pairs


class ProblemTable(Table):
    """``Table`` with every interval bootstrapped by problem instead of by trace."""

    def pooled(self, name: str) -> tuple[float, float, float]:
        return bootstrap_ratio(*by_problem(self.results, self.pairs[name]))

    def pair_gain(self, name: str, other: str) -> tuple[float, float, float]:
        return ratio_difference(
            *by_problem(self.results, self.pairs[name]), *by_problem(self.results, self.pairs[other])
        )

    def split_half(self) -> tuple[float, float, float]:
        grouped = by_problem(self.results, self.ceiling)
        return bootstrap_ratio(*grouped) if grouped[1].sum() else (float("nan"),) * 3


def minutes_per_trace(saved: dict) -> float:
    """The scored traces' own measured minutes (their states' sampling and their rows, over every sitting)."""
    seconds = [r["wall_seconds"] for r in saved["traces"] if r.get("wall_seconds")]
    return float(np.mean(seconds)) / 60 if seconds else float("nan")


def by_outcome(usable: list[TraceResult], say) -> None:
    """Where a row's agreement comes from: each row on the correct and on the failed traces apart, how many
    non-final credits are under SMALL_CREDIT in size (too small for their order to mean much), and on how many
    traces R-hat rose before the answer was written."""
    say("\nBy outcome (pairs nf against MC(16); one trace of each outcome per problem, so problems are resampled):")
    say(f"{'row':22s} {'correct traces':>22s} {'failed traces':>22s}")
    groups = [[r for r in usable if r.trace.outcome == outcome] for outcome in (1.0, 0.0)]
    tables = [ProblemTable(group) if group else None for group in groups]
    for name in (*LEAN_ROWS, "position", "reverse_position"):
        cells = [fmt(table.pooled(name)) if table else "-" for table in tables]
        say(f"{LEAN_NAMES.get(name, name):22s} {cells[0]:>22s} {cells[1]:>22s}")
    counts = [
        f"{len(group)} traces, {int(table.pairs['position'][1].sum()) if table else 0} pairs"
        for group, table in zip(groups, tables, strict=True)
    ]
    say(f"{'':22s} {counts[0]:>22s} {counts[1]:>22s}")
    for name, label in (("answer_only", "R-hat"), ("v_hat[whole,geo_mean]", "v-hat"), ("mc16", "MC(16)")):
        small = [
            f"{sum(int(np.sum(np.abs(r.scores[name][:-1]) < SMALL_CREDIT)) for r in group)} of "
            f"{sum(r.k - 1 for r in group)}"
            for group in groups
        ]
        say(f"{'|' + label + '| < ' + str(SMALL_CREDIT):22s} {small[0]:>22s} {small[1]:>22s}  (non-final credits)")
    climbs = [[rise(r) for r in group] for group in groups]
    rises = [f"{sum(c > RISEN for c in cs)} of {len(cs)} (max {max(cs, default=0):.2f})" for cs in climbs]
    say(f"{'R-hat rose > ' + str(RISEN):22s} {rises[0]:>22s} {rises[1]:>22s}  (before the last segment)")


def rise(result: TraceResult) -> float:
    """How far R-hat, the probability of the right answer, climbed above its value at s_1 at any state before the
    last segment (the running sum of its non-final credits)."""
    return float(max(np.cumsum(result.scores["answer_only"][:-1]).max(), 0.0))


def report_lean(results: list[TraceResult], saved: dict, quiet: bool = False) -> dict[str, str]:
    """Issue 42's report: every usable trace (no setting is selected, so there is no split), each row's pooled
    pairwise-order agreement with MC(16) on non-final segments, bootstrapped by problem, as a share of MC's own
    split-half ceiling, beside the two-sided controls; returns the key=value figures of the last line."""
    say = (lambda *a, **k: None) if quiet else print
    protocol = saved["protocol"]
    usable = [r for r in results if r.usable]
    run = saved.get("run", {})
    screened = saved["screened"]
    in_band = sum(0.2 <= s["pass_rate"] <= 0.8 for s in screened)
    say(
        f"\n=== Issue 42: {protocol['model']} ({protocol.get('precision', '?')}) on {protocol['problems_from']} "
        f"problems, {protocol['segmenter']} K={protocol['k']}, MC({REFERENCE_N}) reference ==="
    )
    say(
        f"screened {len(screened)} problems x {protocol['screen']} samples ({in_band} in [0.2, 0.8]; "
        f"{run.get('screen_seconds', 0) / 60:.1f} min); {len(saved['drawn'])} traces drawn, {len(results)} scored "
        f"(K {k_counts(results)}), {len(usable)} usable over {len({r.problem for r in usable})} problems; "
        f"{minutes_per_trace(saved):.1f} min per scored trace (measured)"
    )
    progress = saved.get("in_progress", {})
    if progress.get("rollouts"):
        say(
            f"in progress: {len(progress['rollouts'])} states' rollouts and {len(progress.get('rows', {}))} rows stored"
        )
    model = str(protocol["model"])
    empty = {"model": model, "traces_scored": str(len(results)), "problems": str(len({r.problem for r in results}))}
    if not usable:
        say("no usable trace yet (>= 3 segments and MC's sigma not constant before the end): nothing to report")
        nan = "nan"
        keys = ("mc_split_half", "rredcot_pairs", "rredcot_over_ceiling", "rhat_only_pairs", "vhat_only_pairs",
                "position_pairs", "reverse_position_pairs", "mc2_pairs_at_equal_cost")  # fmt: skip
        return empty | dict.fromkeys(keys, nan) | {"minutes_per_trace": f"{minutes_per_trace(saved):.1f}",
                                                 "traces_usable": "0"}  # fmt: skip
    table = ProblemTable(usable)
    ceiling = table.split_half()
    pairs = int(table.pairs["position"][1].sum())
    say(
        f"MC's ceiling: MC(8) against an independent MC(8) (the halves of each state's 16 rollouts) orders "
        f"{fmt(ceiling)} of each other's non-final pairs. Every row below is read against MC(16) on the {pairs} "
        f"ordered pairs of non-final segments of the {len(usable)} usable traces; 95% intervals resample problems "
        "(both traces of a problem together); 'of ceiling' = the row / MC's split-half."
    )
    say(f"{'row':22s} {'pairs nf':>22s} {'of ceiling':>10s} {'row - best control':>24s} {'tokens/trace':>12s} "
        f"{'s/trace':>8s}")  # fmt: skip
    for name in LEAN_ROWS:
        best, _ = table.best_control(name)
        gain = fmt(table.pair_gain(name, best)) + f" ({CONTROL_NAMES.get(best, best)})"
        tokens = np.mean([r.tokens[name] for r in usable])
        seconds = np.mean([r.seconds[name] for r in usable])
        say(f"{LEAN_NAMES[name]:22s} {fmt(table.pooled(name)):>22s} {table.pooled(name)[0] / ceiling[0]:10.2f} "
            f"{gain:>24s} {tokens:12.0f} {seconds:8.1f}")  # fmt: skip
    for control in ("random", "position", "reverse_position"):
        say(f"{control + ' (control)':22s} {fmt(table.pooled(control)):>22s} "
            f"{table.pooled(control)[0] / ceiling[0]:10.2f}")  # fmt: skip
    last = fmt(summary(table.spearman[("last_segment", True)]))
    say(f"{'last_segment (control)':22s} Spearman over all segments {last}; RREDCoT's "
        f"{fmt(summary(table.spearman[('rredcot', True)]))}")  # fmt: skip
    mc16_tokens = np.mean([r.tokens["mc16"] for r in usable])
    say(f"{'MC(16), the reference':22s} {'':>22s} {'':>10s} {'':>24s} {mc16_tokens:12.0f}")
    say("\nDifferences (paired bootstrap over problems, pairs nf):")
    for other in ("position", "reverse_position", "answer_only", "v_hat[whole,geo_mean]", "mc2", "loo"):
        say(f"  RREDCoT - {LEAN_NAMES.get(other, other)}: {fmt(table.pair_gain('rredcot', other))}")
    by_outcome(usable, say)
    mechanism(usable, say)
    rredcot_tokens = float(np.mean([r.tokens["rredcot"] for r in usable]))
    mc2_tokens = float(np.mean([r.tokens["mc2"] for r in usable]))
    pooled = lambda name: f"{table.pooled(name)[0]:.3f}"  # noqa: E731
    interval = table.pooled("rredcot")
    return empty | {
        "mc_split_half": f"{ceiling[0]:.3f}",
        "rredcot_pairs": pooled("rredcot"),
        "rredcot_over_ceiling": f"{table.over_ceiling('rredcot'):.3f}",
        "rhat_only_pairs": pooled("answer_only"),
        "vhat_only_pairs": pooled("v_hat[whole,geo_mean]"),
        "position_pairs": pooled("position"),
        "reverse_position_pairs": pooled("reverse_position"),
        "mc2_pairs_at_equal_cost": pooled("mc2"),
        "minutes_per_trace": f"{minutes_per_trace(saved):.1f}",
        "traces_usable": str(len(usable)),
        "nonfinal_pairs": str(pairs),
        "rredcot_interval": f"[{interval[1]:.3f},{interval[2]:.3f}]",
        "rredcot_beats_controls": str(int(table.beats("rredcot"))),
        "loo_pairs": pooled("loo"),
        "mc1_pairs": pooled("mc1"),
        "mc2_tokens_over_rredcot": f"{mc2_tokens / rredcot_tokens:.2f}",
    }


def lean_last_line(headline: dict[str, str], saved: dict) -> str:
    records = saved["traces"]
    truncated = sum(r.get("truncated", 0) for r in records) / max(sum(r.get("rollouts", 0) for r in records), 1)
    fields = headline | {
        "precision": str(saved["protocol"].get("precision", "?")),
        "traces_drawn": str(len(saved["drawn"])),
        "mc_truncated_share": f"{truncated:.3f}",
        "trace_in_progress": str(int(bool(saved.get("in_progress", {}).get("rollouts")))),
    }
    return " ".join(f"{key}={value}" for key, value in fields.items())
