"""Does a value probe (issue 44) order Monte Carlo's segment pairs better than RREDCoT and the controls, on
problems it was not fitted on? Pre-registered, on the compare bench's stored traces (embedded model, CPU).

Data: ``--labels`` (default docs/bench_data/compare_regraded_traces.json: 71 traces of the embedded model, the
fixed_tokens segmenter at K = 6 over the whole response, MC with 16 rollouts per state as the reference and
every rollout's outcome kept). Protocol, fixed before anything is fitted:

1. Problems (both traces of one together) are split into **fit** and **held-out** by a seeded hash
   (``--split-seed``, ``--heldout`` share); the split is printed and written into ``--out`` first.
2. Features: every layer's hidden state at each non-final state's last token (one forward pass per trace).
   Labels: the state's MC(16) success rate (the reference's 16 rollouts).
3. Layer and L2 are chosen by cross-validation grouped by problem (``--folds``) **on the fit split only** (the
   lowest CV Brier); the probe is fitted on the fit split with them.
4. On held-out problems only: pairwise-order agreement of each method's sigma with MC(16)'s on non-final
   segments (bench/compare.py's measure), pooled over traces, with 95% intervals that resample problems;
   beside MC's split-half ceiling (MC(8) against an independent MC(8)), RREDCoT's default, R-hat alone, v-hat
   alone, MC(1) and MC(2) (rollouts independent of the reference) and the two-sided controls (random,
   position, reverse position), every one from the same file's stored scores. A method beats the controls
   where its interval's lower bound is above the best control's agreement. Then the probe's Brier score on
   the held-out states against MC(16), beside a constant (the fit split's mean label) and MC(2)'s own values,
   and a calibration table (probe value bins against the mean MC(16) value).

Cost: the probe reads one forward pass over the trace (the tokens it already holds); it samples and scores no
extra token. Last line: ``model fit_problems heldout_problems heldout_states probe_pairs probe_over_ceiling
rredcot_pairs mc2_pairs_at_equal_cost probe_brier extra_tokens_per_trace`` and more keys.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
from comparison.lean import by_problem
from comparison.saved import from_record
from comparison.stats import bootstrap_ratio

from rredcot_viz.attribution.agreement import control_pair_order, per_trace_pair_order, split_half_pair_order
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.estimators.value_probe import brier
from rredcot_viz.files import write_text
from rredcot_viz.paths import PROJECT_ROOT

LABELS = PROJECT_ROOT / "docs" / "bench_data" / "compare_regraded_traces.json"
OUT = PROJECT_ROOT / "docs" / "bench_data" / "probe_heldout.json"
REFERENCE_N = 16
ROWS = {"rredcot": "RREDCoT (defaults)", "answer_only": "R-hat alone", "v_hat[whole,geo_mean]": "v-hat alone",
        "mc1": "MC(1)", "mc2": "MC(2)"}  # fmt: skip
CONTROLS = ("random", "position", "reverse_position")
# what a method must clear, as in bench/compare.py: the two-sided controls, and R-hat and v-hat alone
PAIR_CONTROLS = (*CONTROLS, "answer_only", "v_hat[whole,geo_mean]")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", default=str(LABELS), help="a compare-bench file with per-rollout outcomes")
    parser.add_argument("--heldout", type=float, default=0.3, help="share of problems held out (default 0.3)")
    parser.add_argument("--split-seed", type=int, default=0, help="seed of the problem split and the CV folds")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds on the fit split")
    parser.add_argument("--limit", type=int, default=None, help="only the first N traces (a smoke run)")
    parser.add_argument("--out", default=str(OUT), help="the bench's output data (JSON)")
    parser.add_argument("--probe-out", default=None, help="also write the fitted probe file here")
    return parser.parse_args(argv)


def load_model():
    from rredcot_viz.model.lm import LanguageModel

    return LanguageModel.load()


def main(argv: list[str] | None = None, lm=None) -> dict[str, str]:
    from rredcot_viz.engine import AnalysisConfig, Analyzer
    from rredcot_viz.estimators.value_probe import precision_of
    from rredcot_viz.segmenters import segmenters
    from rredcot_viz.workflows.probe import calibration, fit, hidden_features, labels_from_bench, problem_split

    args = parse(argv)
    raw = Path(args.labels).read_bytes()
    saved = json.loads(raw)
    records = saved["traces"][: args.limit] if args.limit else saved["traces"]
    protocol = saved["protocol"]
    split = problem_split([str(r["problem"]) for r in records], args.heldout, args.split_seed)
    fit_problems = sorted(p for p, s in split.items() if s == "fit")
    held_problems = sorted(p for p, s in split.items() if s == "heldout")
    print(f"problems split before fitting (seed {args.split_seed}, held-out share {args.heldout}): "
          f"{len(fit_problems)} fit, {len(held_problems)} held out: {', '.join(held_problems)}")  # fmt: skip
    lm = lm or load_model()
    analyzer = Analyzer(lm, AnalysisConfig(scope="whole", boundaries="segmenter"))
    segmenter = segmenters.get(protocol["segmenter"])(k=protocol["k"])
    examples = labels_from_bench(analyzer, dict(saved, traces=records), segmenter, rollouts=REFERENCE_N)
    data = hidden_features(analyzer, examples, f"MC({REFERENCE_N}) of {Path(args.labels).name}, {segmenter.name}")
    probe = fit(data, lm, args.heldout, args.split_seed, args.folds)
    print(f"chosen on the fit split by {args.folds}-fold CV grouped by problem: layer {probe.layer}, L2 {probe.l2:g} "
          f"(CV Brier {probe.metrics['cv_brier']:.4f})")  # fmt: skip
    if args.probe_out:
        probe.save(Path(args.probe_out))
    by_id = {r["trace"]: from_record(r) for r in records}
    held = [i for i, e in enumerate(data.examples) if split[e.problem] == "heldout"]
    heldout = data.subset(held)
    predicted = probe.predict(heldout.features[probe.layer])
    results, probe_sigma = [], []
    for index, example in enumerate(heldout.examples):
        result = by_id[example.trace.trace_id]
        mine = [predicted[r] for r, (e, _) in enumerate(heldout.rows) if e == index]
        if result.usable:
            results.append(result)
            probe_sigma.append(redistribute(np.append(mine, example.trace.outcome)))
    figures = table(results, probe_sigma)
    states = heldout.y
    mc2 = np.concatenate([[o[REFERENCE_N : REFERENCE_N + 2].count("1") / 2 for o in by_id[e.trace.trace_id].outcomes]
                          for e in heldout.examples])  # fmt: skip
    fit_mean = float(data.subset([i for i in range(len(data.examples)) if i not in held]).y.mean())
    briers = {"probe": brier(predicted, states), "constant (fit mean)": brier(np.full_like(states, fit_mean), states),
              "MC(2) values": brier(mc2, states)}  # fmt: skip
    print(f"\nBrier on the {len(states)} held-out non-final states against MC({REFERENCE_N}) values:")
    for name, value in briers.items():
        print(f"  {name:22s} {value:.4f}")
    bins = calibration(predicted, states)
    print("\nCalibration (held-out states): probe value bin, states, mean MC(16) value")
    for low, high, count, mean in bins:
        print(f"  [{low:.1f}, {high:.1f})  {count:4d}  {mean:.3f}")
    mean_tokens = float(np.mean([len(analyzer.context(e.trace).ids) for e in heldout.examples]))
    mc2_tokens = float(np.mean([r.tokens.get("mc2", np.nan) for r in results])) if results else float("nan")
    print(f"\nCost per trace: the probe reads one forward pass over the trace's {mean_tokens:.0f} tokens and samples "
          f"or scores no extra token; MC(2) processed {mc2_tokens:.0f} tokens (prefill + rollouts)")  # fmt: skip
    best = max(PAIR_CONTROLS, key=lambda name: figures[name][0])
    beats = figures["probe"][1] > figures[best][0]
    verdict = "yes" if beats else "no"
    print(f"\nBeats the controls (its interval's lower bound above the best control's agreement): {verdict} "
          f"({figures['probe'][1]:.3f} vs {names_of(best)} {figures[best][0]:.3f})")  # fmt: skip
    headline = {
        "model": lm.name.split("/")[-1].split()[0],  # a key=value line: no spaces
        "fit_problems": str(len(fit_problems)),
        "heldout_problems": str(len(held_problems)),
        "heldout_states": str(len(states)),
        "probe_pairs": f"{figures['probe'][0]:.3f}",
        "probe_over_ceiling": f"{figures['probe'][0] / figures['ceiling'][0]:.2f}",
        "rredcot_pairs": f"{figures['rredcot'][0]:.3f}",
        "mc2_pairs_at_equal_cost": f"{figures['mc2'][0]:.3f}",
        "probe_brier": f"{briers['probe']:.4f}",
        "extra_tokens_per_trace": "0",
        "probe_pairs_low": f"{figures['probe'][1]:.3f}",
        "best_control": best,
        "best_control_pairs": f"{figures[best][0]:.3f}",
        "probe_beats_controls": str(beats).lower(),
        "mc_split_half": f"{figures['ceiling'][0]:.3f}",
        "constant_brier": f"{briers['constant (fit mean)']:.4f}",
        "precision": precision_of(lm),
        "layer": str(probe.layer),
        "l2": f"{probe.l2:g}",
    }
    output = {
        "protocol": {"labels": Path(args.labels).name, "labels_sha256": hashlib.sha256(raw).hexdigest()[:16],
                     "heldout": args.heldout, "split_seed": args.split_seed, "folds": args.folds,
                     "segmenter": protocol["segmenter"], "k": protocol["k"], "reference_rollouts": REFERENCE_N,
                     "model": lm.name, "fingerprint": lm.fingerprint, "precision": precision_of(lm),
                     "limit": args.limit},
        "split": split,
        "fitted_on_problems": probe.training["fit_problems"],
        "selection": {"layer": probe.layer, "l2": probe.l2, "cv_brier": probe.metrics["cv_brier"]},
        "heldout_table": {name: list(values) for name, values in figures.items()},
        "brier": briers,
        "calibration": bins,
        "probe_values": {e.trace.trace_id: [round(float(predicted[r]), 4) for r, (i, _) in enumerate(heldout.rows)
                                            if i == index] for index, e in enumerate(heldout.examples)},
        "headline": headline,
    }  # fmt: skip
    write_text(args.out, json.dumps(output, indent=1))
    print(" ".join(f"{key}={value}" for key, value in headline.items()))
    return headline


def names_of(name: str) -> str:
    names = {"probe": "value probe", **ROWS, **{c: f"{c} (control)" for c in CONTROLS},
             "ceiling": "MC split-half (ceiling)"}  # fmt: skip
    return names[name]


def table(results: list, probe_sigma: list[np.ndarray]) -> dict[str, tuple[float, float, float]]:
    """Pooled pairwise-order agreement with MC(16) on non-final segments of the held-out usable traces, each with
    its 95% interval resampling problems; printed as the held-out table."""
    references = [r.reference for r in results]
    counts = {"probe": per_trace_pair_order(probe_sigma, references, final=False)}
    for name in ROWS:
        counts[name] = per_trace_pair_order([r.scores[name] for r in results], references, final=False)
    for control in CONTROLS:
        counts[control] = control_pair_order(control, references, final=False)
    ceiling = [split_half_pair_order([o[:REFERENCE_N] for o in r.outcomes], float(r.trace.outcome)) or (0.0, 0.0)
               for r in results]  # fmt: skip
    counts["ceiling"] = (np.array([c[0] for c in ceiling]), np.array([c[1] for c in ceiling]))
    figures = {name: bootstrap_ratio(*by_problem(results, pair)) for name, pair in counts.items()}
    pairs = int(counts["probe"][1].sum())
    print(
        f"\nHeld-out problems: {len(results)} usable traces, {pairs} ordered pairs of non-final segments; "
        "agreement with MC(16) sigma, 95% interval resampling problems"
    )
    for name, (point, low, high) in figures.items():
        share = point / figures["ceiling"][0] if name != "ceiling" else 1.0
        print(f"  {names_of(name):28s} {point:.3f} [{low:.3f}, {high:.3f}]  {share:.2f} of ceiling")
    return figures


if __name__ == "__main__":
    main()
