"""Continuation scoring: packed prefix reuse vs naive re-encoding, on the embedded model.

Scores, after 16 prefixes of the longest sample trace (~1,000+ tokens), the reference answer behind the
answer trigger and the reference solution, once by re-encoding every prefix and once with the prefix-reuse
scorer, checks that both agree to 1e-4 in log-prob, and ends with the headline line
``naive_s=<float> reuse_s=<float> speedup=<float>``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.packing import Continuation
from rredcot_viz.traces.io import sample_traces

TRIGGER = "\nTherefore, the final answer is \\boxed{"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefixes", type=int, default=16)
    parser.add_argument("--trace", help="a sample trace's id (default: the longest)")
    parser.add_argument("--model", help="catalogue key, model folder or GGUF file (default: the embedded model)")
    args = parser.parse_args(argv)

    lm = LanguageModel.load(ModelConfig(source=args.model) if args.model else ModelConfig())
    traces = sample_traces()
    trace = next(t for t in traces if t.trace_id == args.trace) if args.trace else max(traces, key=lambda t: len(t.cot))
    prompt = lm.encode_prompt(lm.format_prompt(trace.question))
    cot = lm.encode(trace.cot)
    ids = prompt + cot
    cuts = np.linspace(len(prompt), len(ids), args.prefixes).round().astype(int).tolist()
    answer = tuple(lm.encode(trace.reference_answer + "}"))
    trigger = tuple(lm.encode(TRIGGER))
    solution = tuple(lm.encode("\n\n" + trace.reference_solution))
    requests = [Continuation(c, trigger, answer) for c in cuts] + [Continuation(c, (), solution) for c in cuts]
    print(f"trace {trace.trace_id}: {len(cot)} reasoning tokens after a {len(prompt)}-token prompt")
    print(f"{len(cuts)} prefixes x (trigger+answer {len(trigger) + len(answer)} tok, solution {len(solution)} tok)")

    lm.score_continuations(ids[:64], [Continuation(32, trigger, answer)])  # warm-up (allocator, kernels)
    started = time.perf_counter()
    naive = lm.score_continuations_naive(ids, requests)
    naive_s = time.perf_counter() - started
    started = time.perf_counter()
    reuse = lm.score_continuations(ids, requests)
    reuse_s = time.perf_counter() - started

    worst = max(float(np.abs(a - b).max()) for a, b in zip(naive.logprobs, reuse.logprobs, strict=True))
    assert worst < 1e-4, f"reuse and naive disagree by {worst}"
    print(f"naive: {naive.cost.tokens_processed} tokens in {naive.cost.forward_passes} passes")
    print(f"reuse: {reuse.cost.tokens_processed} tokens in {reuse.cost.forward_passes} passes")
    print(f"max |log-prob difference| = {worst:.2e}")
    print(f"naive_s={naive_s:.3f} reuse_s={reuse_s:.3f} speedup={naive_s / reuse_s:.2f}")


if __name__ == "__main__":
    main()
