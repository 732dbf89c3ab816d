"""The RREDCoT engine on the embedded model: all-boundary scoring vs naive re-encoding vs the token floor.

On the sample trace closest to 1,000 reasoning tokens, with the hybrid segmenter at K=16, prints:
(i) one forward pass over the trace (token stats), (ii) all-boundary R-hat + v-hat from a cold cache,
(iii) the same scores computed naively (prefix + trigger + answer and prefix + reference path re-encoded
separately for every boundary), (iv) the floor, (v) re-segmenting with other K from the cache.

The honest floor is one forward pass over exactly the tokens the analyzer must see: the trace, plus the
context and target tokens of every (series, boundary) item it scores, with the LM head and log-softmax only
where a log-prob is needed (the response positions, whose entropies need the full distribution, and the
target positions). The trace part is run; the continuation tokens are priced at the same pass's measured
cost per token without the head, and the head at the target positions is run on that many rows. The old
floor (trace tokens + C x whole-path scored tokens, all priced at (i)'s cost per token, which includes
full-vocabulary logits at every response position) is printed once for comparison. The last line is
``naive_over_cached=<x> cached_over_floor=<y> floor=honest reseg_ms=<z> model_calls_on_reseg=<n>``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import torch

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.packing import Continuation
from rredcot_viz.scoring.context import TraceContext
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.types import ScoreItem


@dataclass
class Floor:
    """The honest floor's tokens and seconds, split into what was run and what was priced."""

    trace_tokens: int
    continuation_tokens: int
    target_positions: int
    body_s: float  # the transformer over the trace, no LM head
    stats_head_s: float  # LM head + log-softmax + entropy at the response positions
    continuation_s: float  # continuation tokens at body_s's cost per token
    target_head_s: float  # LM head + logsumexp + gather at the target positions

    @property
    def tokens(self) -> int:
        return self.trace_tokens + self.continuation_tokens

    @property
    def seconds(self) -> float:
        return self.body_s + self.stats_head_s + self.continuation_s + self.target_head_s


def honest_floor(lm: LanguageModel, context: TraceContext, items: list[ScoreItem]) -> Floor:
    """One pass over the trace and the scored items' tokens, log-probs only where they are needed."""
    backbone, head = lm.model.get_decoder(), lm.model.get_output_embeddings()
    ids = torch.tensor([context.ids], device=lm.device)
    start = len(context.prompt_ids)
    with torch.inference_mode():
        started = time.perf_counter()
        hidden = backbone(input_ids=ids).last_hidden_state[0]
        body_s = time.perf_counter() - started

        started = time.perf_counter()
        logprobs = torch.log_softmax(head(hidden[start - 1 : -1]).float(), dim=-1)
        logprobs.gather(-1, ids[0, start:, None])
        (-(logprobs.exp() * logprobs).sum(-1)).cpu()
        stats_head_s = time.perf_counter() - started

        targets = [token for item in items for token in item.target]
        rows = hidden[torch.arange(len(targets), device=lm.device) % len(hidden)]
        target_ids = torch.tensor(targets, device=lm.device)
        started = time.perf_counter()
        logits = head(rows).float()
        (logits.gather(-1, target_ids[:, None])[:, 0] - torch.logsumexp(logits, dim=-1)).cpu()
        target_head_s = time.perf_counter() - started
    continuation_tokens = sum(len(item.context) + len(item.target) for item in items)
    continuation_s = continuation_tokens * body_s / len(context.ids)
    return Floor(
        len(context.ids), continuation_tokens, len(targets), body_s, stats_head_s, continuation_s, target_head_s
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--target-tokens", type=int, default=1000)
    parser.add_argument("--model", help="catalogue key, model folder or GGUF file (default: the embedded model)")
    args = parser.parse_args(argv)

    lm = LanguageModel.load(ModelConfig(source=args.model) if args.model else ModelConfig())
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

    # (iv) the floor: old (priced at (i)'s per-token cost) and honest (only the log-probs needed)
    old_floor_s = (len(context.ids) + len(prefixes) * scored) * per_token
    items = [item for row in context.items(series, prefixes, estimator).values() for item in row]
    floor = honest_floor(lm, context, items)
    print(
        f"(iv)  old floor: {len(context.ids) + len(prefixes) * scored} tokens x (i)'s cost per token = "
        f"{old_floor_s:.2f} s -> cached/old floor {cached_s / old_floor_s:.2f} (printed once)"
    )
    print(
        f"      honest floor: {floor.trace_tokens} trace + {floor.continuation_tokens} continuation tokens "
        f"({len(items)} items, {floor.target_positions} target positions) = {floor.tokens} tokens; "
        f"body {floor.body_s:.2f} s + stats head {floor.stats_head_s:.2f} s + continuations "
        f"{floor.continuation_s:.2f} s + target head {floor.target_head_s:.2f} s = {floor.seconds:.2f} s; "
        f"(ii) processed {cached_tokens} tokens in {cached_s:.2f} s -> cached/floor {cached_s / floor.seconds:.2f}"
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
        f"naive_over_cached={naive.cost.seconds / cached_s:.2f} cached_over_floor={cached_s / floor.seconds:.2f} "
        f"floor=honest reseg_ms={reseg_ms:.1f} model_calls_on_reseg={reseg_calls}"
    )


if __name__ == "__main__":
    main()
