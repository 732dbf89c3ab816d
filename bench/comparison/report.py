"""The compare bench's report: agreement with MC(16) per row beside the controls and MC's own ceiling."""

from __future__ import annotations

from collections import Counter

import numpy as np

from comparison.rows import CONTROLS, MC_NS, REFERENCE_N, SAVED_BEFORE, SPLITS, TraceResult, default_row
from comparison.stats import bootstrap_ratio
from comparison.stats import paired_bootstrap_ratio_difference as ratio_difference
from rredcot_viz.attribution.agreement import (
    control_pair_order,
    pearson,
    per_trace_agreement,
    per_trace_control,
    per_trace_pair_order,
    spearman,
    split_half_pair_order,
    value_at_budget,
)
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.paths import shared_data_dir
from rredcot_viz.segmenters import segmenters
from rredcot_viz.stats import bootstrap_mean
from rredcot_viz.traces.answers import answers_equivalent
from rredcot_viz.traces.importers import import_file


def last_line(headline: dict[str, str], saved: dict) -> str:
    records = saved["traces"]
    truncated = sum(r.get("truncated", 0) for r in records) / max(sum(r.get("rollouts", 0) for r in records), 1)
    fields = {
        "traces_drawn": str(len(saved["drawn"])),
        "traces_scored": str(len(records)),
        "mc_max_new_tokens": str(saved["protocol"]["mc_max_tokens"]),
        "mc_truncated_share": f"{truncated:.3f}",
    }
    fields = fields | headline | {"mc_grading": (SAVED_BEFORE | saved["protocol"])["grading"]}
    return " ".join(f"{key}={value}" for key, value in fields.items())


def summary(values: np.ndarray) -> tuple[float, float, float, int]:
    defined = values[~np.isnan(values)]
    low, high = bootstrap_mean(defined)
    return (float(defined.mean()) if len(defined) else float("nan")), low, high, len(defined)


def fmt(summary_: tuple[float, ...]) -> str:
    if len(summary_) == 3:
        mean, low, high = summary_
        return f"{mean:+.3f} [{low:+.2f}, {high:+.2f}]"
    mean, low, high, n = summary_
    return f"{mean:+.3f} [{low:+.2f}, {high:+.2f}] n={n}"


class Table:
    """Per-trace agreement of every row and control with MC(16) on one set of traces, MC's agreement with itself
    (split halves of each state's 16 rollouts) and the two-sided controls a row must clear."""

    def __init__(self, results: list[TraceResult]):
        self.results = results
        references = [r.reference for r in results]
        self.rows = [name for name in results[0].scores if name != "mc16"] if results else []
        self.spearman: dict[tuple[str, bool], np.ndarray] = {}
        self.kendall: dict[str, np.ndarray] = {}
        self.pairs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for name in self.rows:
            scores = [r.scores[name] for r in results]
            for final in (False, True):
                self.spearman[(name, final)] = per_trace_agreement(scores, references, "spearman", final=final)
            self.kendall[name] = per_trace_agreement(scores, references, "kendall", final=False)
            self.pairs[name] = per_trace_pair_order(scores, references, final=False)
        for control in CONTROLS:
            for final in (False, True):
                self.spearman[(control, final)] = per_trace_control(control, references, "spearman", final=final)
            self.kendall[control] = per_trace_control(control, references, "kendall", final=False)
            self.pairs[control] = control_pair_order(control, references, final=False)
        self.ceiling = ceiling_counts(results)

    def mean(self, name: str, final: bool = False) -> float:
        values = self.spearman[(name, final)]
        return float(np.nanmean(values)) if (~np.isnan(values)).any() else float("nan")

    def pooled(self, name: str) -> tuple[float, float, float]:
        return bootstrap_ratio(*self.pairs[name])

    def pair_gain(self, name: str, other: str) -> tuple[float, float, float]:
        return ratio_difference(*self.pairs[name], *self.pairs[other])

    def split_half(self) -> tuple[float, float, float]:
        """MC(8) against an independent MC(8), pooled over the traces with both halves ordering a pair."""
        return bootstrap_ratio(*self.ceiling) if self.ceiling[1].sum() else (float("nan"),) * 3

    def over_ceiling(self, name: str) -> float:
        return self.pooled(name)[0] / self.split_half()[0]

    def best_control(self, name: str) -> tuple[str, float]:
        """The strongest two-sided control for ``name``'s non-final pairs (a row is never its own control)."""
        pooled = {c: self.pooled(c)[0] for c in PAIR_CONTROLS if c in self.pairs and c != name}
        best = max(pooled, key=pooled.get)
        return best, pooled[best]

    def beats(self, name: str) -> bool:
        """Beats the controls only where its interval's lower bound is above the best control's agreement."""
        return self.pooled(name)[1] > self.best_control(name)[1]


PAIR_CONTROLS = ("random", "position", "reverse_position", "answer_only", "v_hat[whole,geo_mean]")
CONTROL_NAMES = {"answer_only": "R-hat alone", "v_hat[whole,geo_mean]": "v-hat alone"}


def ceiling_counts(results: list[TraceResult]) -> tuple[np.ndarray, np.ndarray]:
    """Each trace's split-half (agreeing, pairs) of MC with itself; (0, 0) where it is unknown (older records
    without per-rollout outcomes, or a half that orders no pair)."""
    counts = [split_half_pair_order(reference_outcomes(r), float(r.trace.outcome)) if r.outcomes else None
              for r in results]  # fmt: skip
    counts = [c or (0.0, 0.0) for c in counts]
    return np.array([c[0] for c in counts]), np.array([c[1] for c in counts])


def k_counts(results: list[TraceResult]) -> str:
    counts = Counter(r.k for r in results)
    return ",".join(f"{k}:{counts[k]}" for k in sorted(counts))


def reference_outcomes(result: TraceResult) -> list[str]:
    """The reference's 16 rollouts of each non-final state (the ones after them are MC(1), MC(2), MC(4)'s)."""
    return [o[:REFERENCE_N] for o in result.outcomes]


def report(results: list[TraceResult], min_nonfinal: int, quiet: bool = False) -> dict[str, str]:
    """Print the inventory, the headline over every pre-registered trace (settings fixed before scoring), the
    selection (chosen on one split, reported on the other), MC's own ceiling and the paper comparison; return
    the headline key=value figures."""
    say = (lambda *a, **k: None) if quiet else print
    usable = [r for r in results if r.usable]
    split = {s: [r for r in usable if r.split == s] for s in SPLITS}
    say("\nTraces by split and K (segments; the last writes the answer), all scored / usable:")
    for s in SPLITS:
        scored = [r for r in results if r.split == s]
        say(f"  {s:10s}: scored {len(scored)} (K {k_counts(scored)}), usable {len(split[s])} (K {k_counts(split[s])})")
    if not split["selection"] or not split["evaluation"]:
        say("one split has no usable trace yet: nothing to select or report")
        return {"selection_traces": str(len(split["selection"])), "evaluation_traces": str(len(split["evaluation"]))}
    everything = Table(usable)
    head_traces = [r for r in usable if r.k - 1 >= min_nonfinal]
    head = Table(head_traces) if head_traces else None
    ceiling = everything.split_half()
    say(
        f"\n=== HEADLINE: all {len(usable)} usable traces (every row's settings were fixed before any trace was "
        "scored; the split is for the selected setting only) ==="
    )
    say(
        f"MC's ceiling: MC(8) against an independent MC(8) (split halves of each state's 16 rollouts) orders "
        f"{fmt(ceiling)} of each other's non-final pairs ({int(everything.ceiling[1].sum())} pairs over "
        f"{int((everything.ceiling[1] > 0).sum())} traces). A method compared with MC(16) is read against it: "
        "'of ceiling' = pairs nf / that figure (the truth itself would score somewhat above it against MC(16))."
    )
    print_table(everything, head, min_nonfinal, say)
    # the choice: the Q-hat setting with the best pooled pairwise-order agreement on the selection split
    tables = {s: Table(split[s]) for s in SPLITS}
    q_rows = [name for name in tables["selection"].rows if name.startswith("rredcot")]
    ranked = sorted(q_rows, key=lambda name: -tables["selection"].pooled(name)[0])
    selected = ranked[0]
    say(f"\nQ-hat settings on the SELECTION split ({len(split['selection'])} usable traces), pairwise-order nf:")
    for name in ranked:
        shown = default_row() if name == "rredcot" else name
        say(f"  {shown:30s} {fmt(tables['selection'].pooled(name))}{'   <- selected' if name == selected else ''}")
    chosen = default_row() if selected == "rredcot" else selected
    evaluation = tables["evaluation"]
    best, best_value = evaluation.best_control(selected)
    say(
        f"selected: {chosen} (library default: {default_row()}); on the EVALUATION split ({len(split['evaluation'])} "
        f"traces): {fmt(evaluation.pooled(selected))}, best control there {CONTROL_NAMES.get(best, best)} "
        f"{best_value:.3f}, MC's ceiling there {fmt(evaluation.split_half())}"
    )
    say(f"\nDifferences on all {len(usable)} usable traces (paired bootstrap over traces, pairwise order nf):")
    contrasts = [("rredcot", c) for c in ("position", "reverse_position", "answer_only", "v_hat[whole,geo_mean]")]
    contrasts += [("rredcot", "mc4"), ("mc4", "position"), ("v_hat[remaining,mean_prob]", "reverse_position")]
    for name, other in contrasts:
        say(f"  {name} - {CONTROL_NAMES.get(other, other)}: {fmt(everything.pair_gain(name, other))}")
    mechanism(usable, say)
    paper_comparison(usable, say)
    budget_curve = (
        [float(np.mean([r.tokens[f"mc{n}"] for r in usable])) for n in MC_NS],
        [everything.pooled(f"mc{n}")[0] for n in MC_NS],
    )
    rredcot_tokens = float(np.mean([r.tokens["rredcot"] for r in usable]))
    mc16_tokens = float(np.mean([r.tokens["mc16"] for r in usable]))
    at_budget = value_at_budget(*budget_curve, rredcot_tokens)
    nonfinal = [r.k - 1 for r in usable]
    mean = lambda table, name, final=False: f"{table.mean(name, final):.3f}" if table else "nan"  # noqa: E731
    pooled = lambda name: f"{everything.pooled(name)[0]:.3f}"  # noqa: E731
    return {
        "selection_traces": str(len(split["selection"])),
        "evaluation_traces": str(len(split["evaluation"])),
        "headline_traces": str(len(usable)),
        "min_nonfinal_segments": str(min(nonfinal)),
        "k_counts": k_counts(usable),
        "mc_split_half": f"{ceiling[0]:.3f}",
        "rredcot_pairs_nonfinal": pooled("rredcot"),
        "rredcot_over_ceiling": f"{everything.over_ceiling('rredcot'):.3f}",
        "rredcot_beats_controls": str(int(everything.beats("rredcot"))),
        "random_pairs": pooled("random"),
        "position_pairs_nonfinal": pooled("position"),
        "reverse_position_pairs": pooled("reverse_position"),
        "rhat_only_pairs": pooled("answer_only"),
        "vhat_only_pairs": pooled("v_hat[whole,geo_mean]"),
        "mc1_pairs": pooled("mc1"),
        "mc4_pairs": pooled("mc4"),
        "selected_qhat": chosen,
        "selected_pairs_evaluation": f"{evaluation.pooled(selected)[0]:.3f}",
        "default_qhat": default_row(),
        "rredcot_spearman_nonfinal": mean(head, "rredcot"),
        "position_spearman_nonfinal": mean(head, "position"),
        "rredcot_spearman_all": f"{everything.mean('rredcot', True):.3f}",
        "last_segment_spearman_all": f"{everything.mean('last_segment', True):.3f}",
        "vhat_gain_pairs": f"{everything.pair_gain('rredcot', 'answer_only')[0]:+.3f}",
        "tokens_mc16_over_rredcot": f"{mc16_tokens / rredcot_tokens:.1f}",
        "mc_pairs_at_rredcot_budget": f"{at_budget[0]:.3f}",
        "mc_budget_clamped": str(int(at_budget[1] == "clamped")),
    }


def print_table(table: Table, head: Table | None, min_nonfinal: int, say) -> None:
    results = table.results
    ceiling = table.split_half()[0]
    say(
        f"Agreement with MC(16) sigma on non-final segments (nf) and all segments. 'pairs nf' pools the ordered "
        f"pairs of non-final segments of all {len(results)} usable traces ({int(table.pairs['position'][1].sum())} "
        f"pairs; 95% bootstrap over traces; random = 0.500 exactly); 'of ceiling' = pairs nf / MC's split-half "
        f"{ceiling:.3f}; 'Spearman nf' is per trace, averaged, on the {len(head.results) if head else 0} traces with "
        f">= {min_nonfinal} non-final segments; 'Spearman all' on all usable traces. position = credit equal to the "
        "segment's index, reverse_position its opposite. 'beats ctl': the row's lower bound is above the best of "
        "random, position, reverse position, R-hat alone (answer_only) and v-hat alone (v_hat[whole,geo_mean])."
    )
    say(
        f"{'row':30s} {'pairs nf':>21s} {'of ceiling':>10s} {'Spearman nf':>27s} {'Spearman all':>27s} "
        f"{'beats ctl':>9s} {'tokens/trace':>12s} {'s/trace':>8s}"
    )
    for name in [*table.rows, *CONTROLS]:
        nf = fmt(summary(head.spearman[(name, False)])) if head else "-"
        al = fmt(summary(table.spearman[(name, True)]))
        if name in CONTROLS:
            verdict, cost = "(control)", f"{'-':>12s} {'-':>8s}"
        else:
            verdict = "yes" if table.beats(name) else "no"
            if name in PAIR_CONTROLS:
                verdict += " (ctl)"
            tokens = np.mean([r.tokens[name] for r in results])
            cost = f"{tokens:12.0f} {np.mean([r.seconds[name] for r in results]):8.2f}"
        pairs = fmt(table.pooled(name)) if name != "last_segment" else "-"
        share = f"{table.pooled(name)[0] / ceiling:10.2f}" if name != "last_segment" else f"{'-':>10s}"
        say(f"{name:30s} {pairs:>21s} {share} {nf:>27s} {al:>27s} {verdict:>9s} {cost}")
    tokens = np.mean([r.tokens["mc16"] for r in results])
    say(f"{'mc16 (the reference)':30s} {'':>21s} {'':>10s} {'':>27s} {'':>27s} {'':>9s} {tokens:12.0f}")


def mechanism(usable: list[TraceResult], say) -> None:
    """The figures the docs' explanations rest on: where MC starts, and what follows position on the non-final
    segments (RREDCoT's sigma, its R-hat part and its v-hat part, each against the segment index)."""
    start = np.array([r.reference_values[0] for r in usable])
    say(f"\nMC(16) from the question alone (s_1), mean over the {len(usable)} usable traces: {fmt(summary(start))}")
    say("Per-trace Spearman with the segment index on NON-FINAL segments (what follows position):")
    for name in ("rredcot", "answer_only", "v_hat[whole,geo_mean]", "mc16"):
        values = np.array([spearman(r.scores[name][:-1], np.arange(1.0, r.k)) for r in usable])
        say(f"  {CONTROL_NAMES.get(name, name):22s} {fmt(summary(values))}")


def paper_comparison(usable: list[TraceResult], say) -> None:
    """The paper's claim (docs/method.md §7.5): LOO and gradient attribution agree highly with each other and weakly
    with RREDCoT. Per-trace Spearman over all segments, both splits (nothing is selected here), with each
    method's agreement with the position control beside it (two methods that both follow position agree)."""
    say(
        f"\nThe paper's comparison on all {len(usable)} usable traces (per-trace Spearman, all segments; target = the "
        "trace's own answer, the paper's unconditioned attribution, and the reference answer):"
    )
    position = {id(r): np.arange(1.0, r.k + 1) for r in usable}
    pairs = [
        ("loo", "grad_x_input"),
        ("loo", "shapley"),
        ("shapley", "grad_x_input"),
        ("loo", "rredcot"),
        ("grad_x_input", "rredcot"),
        ("shapley", "rredcot"),
        ("attention", "rredcot"),
        ("loo", "position"),
        ("grad_x_input", "position"),
        ("rredcot", "position"),
    ]
    for a, b in pairs:
        cells = []
        for suffix in ("", "[reference]"):
            name_a = a if a == "rredcot" else a + suffix
            name_b = b if b in ("rredcot", "position") else b + suffix
            values = np.array(
                [
                    spearman(r.scores[name_a], position[id(r)] if name_b == "position" else r.scores[name_b])
                    for r in usable
                ]
            )
            cells.append(fmt(summary(values)))
        say(f"  {a:13s} vs {b:13s} own: {cells[0]:>27s}   reference: {cells[1]:>27s}")
    differs = [r for r in usable if not answers_equivalent(r.trace.answer or "", r.trace.reference_answer or "")]
    changed = sum(not np.allclose(r.scores["loo"], r.scores["loo[reference]"]) for r in differs)
    say(f"  own and reference targets differ on {len(differs)} traces; LOO's scores differ on {changed} of them")
    if differs and changed == 0:  # a check that can fail: the target switch must reach the model
        raise RuntimeError("the own-answer target gave the reference target's scores on every trace where they differ")


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
