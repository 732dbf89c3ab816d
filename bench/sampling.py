"""Monte Carlo through the local sampler and through an inference engine (vLLM), paired in one run.

On the longest sample trace (``--trace`` names another), segmented by the hybrid segmenter, draws ``--rollouts``
continuations from every state with the project's sampler (``torch`` on ``--threads`` threads) and through the
``openai`` backend against a vLLM server with the same number of compute threads, alternating state by state so
that both see the same machine. Both backends use the same seeds, token cap and stop rules (the server's rollouts
are cut where the local sampler would stop). Prints per backend the tokens each generated per second (the engine
counts what it generated, including tokens after a stated answer that the rollout drops) and the rollout tokens per
second (only the kept tokens, the same count for both), and the two value curves side by side with their Wilson 95%
intervals. Without ``--url`` it starts the engine itself (``scripts/dev engine`` on a spare port, stopped at the
end). The control: the local sampler again with other seeds (``local'``), so each check shows what chance alone
gives on the same states. The last line is ``engine_over_local_tokens_per_s=<x> rollout_tokens_ratio=<y>
mc_wall_ratio=<z> max_value_diff=<d> max_value_diff_in_ci=<0|1>`` (1 when every state's two values lie inside each
other's Wilson intervals) ``control_value_diff_in_ci=<0|1>`` (the same for the control) and
``engine_states_differing=<n> control_states_differing=<n>`` (states whose Newcombe 95% interval of the
difference from the local value excludes 0).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

import torch

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.model.backends import SamplerSpec
from rredcot_viz.model.backends.openai import OpenAIConfig
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.meter import measure
from rredcot_viz.segmenters import segmenters
from rredcot_viz.stats import newcombe_difference, wilson_interval
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.types import CallCost

ROOT = Path(__file__).resolve().parent.parent
SLACK = 1e-9  # a Wilson bound at k = 0 or k = n is off by rounding
CONTROL = "local'"  # the local sampler again with other seeds: what chance alone gives


def start_engine(threads: int, port: int) -> str:
    """``scripts/dev engine`` with ``threads`` compute threads on ``port``; returns its URL."""
    env = {**os.environ, "ENGINE_THREADS": str(threads), "ENGINE_PORT": str(port)}
    started = time.perf_counter()
    subprocess.run([str(ROOT / "scripts/dev"), "engine"], check=True, env=env, cwd=ROOT)
    print(f"engine ready in {time.perf_counter() - started:.0f} s (not counted below)")
    return f"http://127.0.0.1:{port}/v1"


def group_cpu_seconds(port: int) -> float:
    """CPU seconds so far of every process of the engine this bench started (its session: API server, scheduler,
    worker), so that the two backends' CPU use can be compared, not only their wall time."""
    leader = (ROOT / f".venv-engine/server-{port}.pid").read_text().strip()
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[2] == leader:  # the process group id (field 5 of /proc/PID/stat)
            total += int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


def stop_engine(port: int) -> None:
    env = {**os.environ, "ENGINE_PORT": str(port)}
    subprocess.run([str(ROOT / "scripts/dev"), "engine", "stop"], check=False, env=env, cwd=ROOT)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=16, help="rollouts per state")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="token cap per rollout")
    parser.add_argument("--k", type=int, default=6, help="segments of the hybrid segmenter")
    parser.add_argument("--threads", type=int, default=1, help="compute threads of each backend")
    parser.add_argument("--url", help="a running engine (default: start one with --threads threads)")
    parser.add_argument("--port", type=int, default=8012, help="port of the engine this bench starts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trace", help="a sample trace's id (default: the longest, the speed protocol; a short one "
                        "the model can finish from shows the value curves apart from 0)")  # fmt: skip
    parser.add_argument("--scope", default="reasoning", help="what is segmented (whole: the answer line is the last "
                        "segment, so the last state's rollouts can reach the answer)")  # fmt: skip
    parser.add_argument("--model", help="catalogue key, model folder or GGUF file (default: the embedded model)")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    url = args.url or start_engine(args.threads, args.port)
    try:
        run(args, url, None if args.url else args.port)
    finally:
        if not args.url:
            stop_engine(args.port)


def run(args: argparse.Namespace, url: str, port: int | None) -> None:
    lm = LanguageModel.load(ModelConfig(source=args.model) if args.model else ModelConfig())
    traces = {t.trace_id: t for t in sample_traces()}
    if args.trace and args.trace not in traces:
        raise SystemExit(f"--trace {args.trace!r} is not a sample trace; the sample traces: {', '.join(traces)}")
    trace = traces[args.trace] if args.trace else max(traces.values(), key=lambda t: len(t.cot))
    segmenter = segmenters.get("hybrid")(k=args.k)
    estimator = estimators.get("mc")(rollouts=args.rollouts, max_new_tokens=args.max_new_tokens, seed=args.seed)
    config = AnalysisConfig(scope=args.scope, boundaries="states")
    backends = {
        "local": Analyzer(lm, config),
        "engine": Analyzer(lm, config, sampler=SamplerSpec("openai", OpenAIConfig(url=url)).build(lm)),
    }
    print(f"{backends['engine'].sampler.check()}")
    prefixes = backends["local"].segment(trace, segmenter).state_prefixes[:-1]
    context = backends["local"].context(trace)
    print(
        f"trace {trace.trace_id}: {context.n_response_tokens} reasoning tokens after a {len(context.prompt_ids)}-token "
        f"prompt; {len(prefixes)} states x {args.rollouts} rollouts, cap {args.max_new_tokens} tokens, "
        f"{args.threads} compute thread(s) each, torch {torch.get_num_threads()}"
    )
    spent = {name: CallCost() for name in backends}
    kept = dict.fromkeys(backends, 0)
    cpu = dict.fromkeys(backends, 0.0)  # this process's CPU seconds (the client's, for the engine) + the engine's
    for done, prefix in enumerate(prefixes, start=1):
        order = list(backends) if done % 2 else list(reversed(backends))  # alternate who goes first
        for name in order:
            analyzer = backends[name]
            state = analyzer.context(trace)
            before = time.process_time(), group_cpu_seconds(port) if port else 0.0
            with measure() as cost:
                estimator.draw(state, {prefix: args.rollouts})
            spent[name] = spent[name] + cost.cost
            cpu[name] += time.process_time() - before[0]
            if name == "engine" and port:
                cpu[name] += group_cpu_seconds(port) - before[1]
            kept[name] += sum(r.tokens for r in estimator.rollouts(state, prefix))
        print(
            f"  state {done}/{len(prefixes)} (prefix {prefix}): "
            + ", ".join(f"{n} {spent[n].tokens_generated} tok {spent[n].seconds:.0f} s" for n in backends)
        )
    results = {name: a.analyze(trace, segmenter, estimator) for name, a in backends.items()}
    # the control: the local sampler again with other seeds, so the same checks show what chance alone gives
    other_seeds = estimators.get("mc")(rollouts=args.rollouts, max_new_tokens=args.max_new_tokens, seed=args.seed + 1)
    results[CONTROL] = Analyzer(lm, config).analyze(trace, segmenter, other_seeds)

    print(f"\nV at each state, Wilson 95% (local' = the local sampler with other seeds, the control); differences "
          f"from local with Newcombe 95% intervals ({args.rollouts} rollouts each)")  # fmt: skip
    print(f"{'state':6} {'V_local':>20} {'V_engine':>20} {'V_local_other':>20} {'engine - local':>24} "
          f"{'local_other - local':>24}")  # fmt: skip
    inside: dict[str, list[bool]] = {"engine": [], CONTROL: []}
    differs = {"engine": 0, CONTROL: 0}
    per_state = {n: results[n].values.components["successes"][:-1].astype(int) for n in results}
    for t in range(len(prefixes)):
        value = {n: results[n].values.values[t] for n in results}
        interval = {n: results[n].values.intervals["V_mc"][t] for n in results}
        cells = [f"{value[n]:.3f} [{interval[n][0]:.2f}, {interval[n][1]:.2f}]" for n in results]
        for other in inside:
            li, oi = interval["local"], interval[other]
            inside[other].append(li[0] - SLACK <= value[other] <= li[1] + SLACK
                                 and oi[0] - SLACK <= value["local"] <= oi[1] + SLACK)  # fmt: skip
            low, high = newcombe_difference(per_state["local"][t], args.rollouts, per_state[other][t], args.rollouts)
            differs[other] += int(low > 0 or high < 0)
            cells.append(f"{value[other] - value['local']:+.3f} [{low:+.2f}, {high:+.2f}]"
                         + ("" if inside[other][-1] else " *"))  # fmt: skip
        print(
            f"s_{t + 1:<4} " + " ".join(f"{c:>20}" for c in cells[:3]) + " " + " ".join(f"{c:>24}" for c in cells[3:])
        )
    print("* a value outside the other's Wilson interval")
    successes = {n: int(per_state[n].sum()) for n in results}
    total = len(prefixes) * args.rollouts
    for name in results:
        low, high = wilson_interval(successes[name], total)
        print(f"{name}: {successes[name]}/{total} rollouts correct overall [{low:.3f}, {high:.3f}]")

    rates = {n: spent[n].tokens_generated / spent[n].seconds for n in backends}
    rollout_rates = {n: kept[n] / spent[n].seconds for n in backends}
    for name in backends:
        print(
            f"{name}: {spent[name].tokens_generated} tokens generated, {kept[name]} kept in rollouts, "
            f"{spent[name].seconds:.1f} s: {rates[name]:.1f} generated tok/s, {rollout_rates[name]:.1f} rollout tok/s; "
            + (f"{cpu[name]:.1f} CPU s, {1000 * cpu[name] / spent[name].tokens_generated:.1f} CPU ms per token"
               if port or name == "local" else "CPU of an external engine not measured")
        )  # fmt: skip
    diff = max(abs(results["local"].values.values - results["engine"].values.values))
    print(
        f"engine_over_local_tokens_per_s={rates['engine'] / rates['local']:.2f} "
        f"rollout_tokens_ratio={rollout_rates['engine'] / rollout_rates['local']:.2f} "
        f"mc_wall_ratio={spent['local'].seconds / spent['engine'].seconds:.2f} "
        f"max_value_diff={diff:.3f} max_value_diff_in_ci={int(all(inside['engine']))} "
        f"control_value_diff_in_ci={int(all(inside[CONTROL]))} "
        f"engine_states_differing={differs['engine']} control_states_differing={differs[CONTROL]}"
    )


if __name__ == "__main__":
    main()
