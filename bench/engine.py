"""The RREDCoT engine on the embedded model: all-boundary scoring vs naive re-encoding vs the token floor.

On the sample trace closest to 1,000 reasoning tokens, with the hybrid segmenter at K=16, prints:
(i) one forward pass over the trace (token stats), (ii) all-boundary R-hat + v-hat from a cold cache,
(iii) the same scores computed naively (prefix + trigger + answer and prefix + reference path re-encoded
separately for every boundary), (iv) the token-count floor (trace tokens + C x scored tokens per boundary,
priced at (i)'s cost per token, C = boundaries scored; the floor for K+1 states is printed too) and (ii)'s
tokens processed, (v) re-segmenting with other K from the cache. The last line is
``naive_over_cached=<x> cached_over_floor=<y> reseg_ms=<z> model_calls_on_reseg=<n>``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.packing import Continuation
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.io import sample_traces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--target-tokens", type=int, default=1000)
    args = parser.parse_args()

    lm = LanguageModel.load()
    trace = min(sample_traces(), key=lambda t: abs(len(lm.encode(t.cot)) - args.target_tokens))
    analyzer = Analyzer(lm, AnalysisConfig(boundaries="all"))
    estimator = estimators.get("rredcot")()
    segmenter = segmenters.get("hybrid")(k=args.k)
    context = analyzer.context(trace)
    print(f"trace {trace.trace_id}: {context.n_response_tokens} response tokens, prompt {len(context.prompt_ids)}")
    lm.token_stats(context.ids[:64], 1)  # warm-up

    # (i) one forward pass over the trace
    started = time.perf_counter()
    lm.token_stats(context.ids, len(context.prompt_ids))
    forward_s = time.perf_counter() - started
    per_token = forward_s / len(context.ids)
    print(f"(i)   one forward pass: {len(context.ids)} tokens in {forward_s:.2f} s ({per_token * 1e3:.2f} ms/token)")

    # (ii) all-boundary R-hat + v-hat from a cold cache
    result = analyzer.analyze(trace, segmenter, estimator)
    cached_s, cached_tokens = result.cost.seconds, result.cost.tokens_processed
    prefixes = sorted(analyzer.candidate_prefixes(context, segmenter))
    series = estimator.series(context)
    scored = sum(len(lm.encode(s.context)) + len(lm.encode(s.target)) for s in series)
    print(
        f"(ii)  all-boundary: {len(prefixes)} boundaries x {len(series)} series ({scored} tokens each) "
        f"in {cached_s:.2f} s, {cached_tokens} tokens processed, {result.cost.calls} model call"
    )

    # (iii) naive: re-encode prefix + context + target separately for every boundary and series
    requests = [
        Continuation(len(context.prompt_ids) + p, tuple(lm.encode(s.context)), tuple(lm.encode(s.target)))
        for p in prefixes
        for s in series
    ]
    naive = lm.score_continuations_naive(context.ids, requests)
    packed = lm.score_continuations(context.ids, requests)
    worst = max(float(np.abs(a - b).max()) for a, b in zip(naive.logprobs, packed.logprobs, strict=True))
    print(
        f"(iii) naive: {naive.cost.tokens_processed} tokens in {naive.cost.seconds:.2f} s "
        f"(max |log-prob difference| vs cached {worst:.1e})"
    )

    # (iv) token-count floor
    floor_tokens = len(context.ids) + len(prefixes) * scored
    floor_s = floor_tokens * per_token
    k_floor_tokens = len(context.ids) + (args.k + 1) * scored
    print(
        f"(iv)  floor: {floor_tokens} tokens = {floor_s:.2f} s at (i)'s cost per token; (ii) processed "
        f"{cached_tokens} tokens; floor for K+1={args.k + 1} states only: {k_floor_tokens} tokens"
    )

    # (v) re-segment from the cache
    calls_before = lm.meter.total.calls
    timings = []
    for k in (4, 8, 12, 6, 10, 16):
        started = time.perf_counter()
        again = analyzer.analyze(trace, segmenters.get("hybrid")(k=k), estimator)
        timings.append((time.perf_counter() - started) * 1e3)
        assert abs(again.sigma.sum() - again.outcome) < 1e-9
    for name in ("sentence", "line", "paragraph", "keyword"):
        started = time.perf_counter()
        analyzer.analyze(trace, segmenters.get(name)(), estimator)
        timings.append((time.perf_counter() - started) * 1e3)
    reseg_calls = lm.meter.total.calls - calls_before
    reseg_ms = float(np.median(timings))
    print(
        f"(v)   re-segmenting 10 times (hybrid K=4..16, sentence, line, paragraph, keyword): median "
        f"{reseg_ms:.1f} ms, max {max(timings):.1f} ms, {reseg_calls} model calls"
    )
    print(
        f"naive_over_cached={naive.cost.seconds / cached_s:.2f} cached_over_floor={cached_s / floor_s:.2f} "
        f"reseg_ms={reseg_ms:.1f} model_calls_on_reseg={reseg_calls}"
    )


if __name__ == "__main__":
    main()
