"""Time to the first live heatmap of every sample trace on the loaded model, as the Inspect page computes it.

    .venv/bin/python bench/first_heatmap.py                 # embedded SmolLM2-135M, 2 CPU cores

For each sample, a cold analysis (fresh cache) with the page's default segmenter (hybrid, K = min(config K,
pieces)) and estimator, once scoring only the chosen segmenter's candidate boundaries (``segmenter``, what
the page runs first) and once scoring every candidate of every text segmenter (``all``, what makes a later
switch to another segmenter free). Prints per-trace seconds; last line:
``worst_first_heatmap_s= worst_trace= worst_all_boundaries_s= median_first_heatmap_s= traces=``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.segmenters import segmenters
from rredcot_viz.segmenters.hybrid import HybridSegmenterConfig
from rredcot_viz.traces.io import sample_traces


def timed_analysis(lm: LanguageModel, trace, boundaries: str) -> tuple[float, int]:
    analyzer = Analyzer(lm, AnalysisConfig(boundaries=boundaries))  # a fresh cache: the cold first look
    text_input = analyzer.context(trace).segmenter_input("reasoning", with_entropies=False)
    pieces = len(segmenters.get("hybrid")(k=None).candidate_cuts(text_input)) + 1
    segmenter = segmenters.get("hybrid")(k=max(min(HybridSegmenterConfig().k, pieces), 1))
    started = time.perf_counter()
    result = analyzer.analyze(trace, segmenter, estimators.get("rredcot")())
    return time.perf_counter() - started, result.k


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="catalogue key (default: the embedded model)")
    parser.add_argument("--traces", type=int, default=0, help="the first N sample traces only (0: all)")
    args = parser.parse_args(argv)
    lm = LanguageModel.load(ModelConfig(source=args.model) if args.model else ModelConfig())
    first, everything = {}, {}
    for trace in sample_traces()[: args.traces or None]:
        first[trace.trace_id], k = timed_analysis(lm, trace, "segmenter")
        everything[trace.trace_id], _ = timed_analysis(lm, trace, "all")
        print(
            f"{trace.trace_id:28s} K={k:2d} first heatmap {first[trace.trace_id]:6.2f} s · "
            f"all boundaries {everything[trace.trace_id]:6.2f} s",
            flush=True,
        )
    worst = max(first, key=first.get)
    print(
        f"worst_first_heatmap_s={first[worst]:.2f} worst_trace={worst} "
        f"worst_all_boundaries_s={max(everything.values()):.2f} "
        f"median_first_heatmap_s={statistics.median(first.values()):.2f} traces={len(first)}"
    )


if __name__ == "__main__":
    main()
