"""Scoring one trace with every row on a cold cache, Monte Carlo's rollouts kept as they are drawn (``--resume``)."""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict

import numpy as np
import torch
from workers import model_pool, worker_model

from comparison.problems import as_trace
from comparison.rows import REFERENCE_N, SPLITS, TraceResult, attribution_rows, estimator_rows, mc_ns
from rredcot_viz.cli.model_commands import sampler_spec_from_args
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.model.backends import Sampler
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.scoring.cache import BoundaryCache
from rredcot_viz.segmenters import segmenters
from rredcot_viz.training.task import BUILTIN_STOP
from rredcot_viz.types import Rollout
from rredcot_viz.workflows.compare import compare


class OutOfTime(Exception):
    """``--minutes`` ran out between two states or two rows (what was made is stored; ``--resume`` goes on)."""


class RolloutStore:
    """A persistent backend for the Monte Carlo analyzer's cache that keeps only rollouts: each state's rollouts,
    with the seconds they took, the moment they are drawn (``on_save`` writes them to ``--out``); and the rows
    scored so far on the trace in progress. ``deadline`` (perf_counter seconds) stops between two states."""

    def __init__(self, saved: dict | None = None, on_save=None, deadline: float = float("inf")):
        saved = saved or {}
        self.rollouts: dict[str, list[dict]] = dict(saved.get("rollouts", {}))
        self.seconds: dict[str, float] = dict(saved.get("seconds", {}))
        self.rows: dict[str, dict] = dict(saved.get("rows", {}))
        self.on_save = on_save or (lambda: None)
        self.deadline = deadline
        self.mark()

    @staticmethod
    def key(context_key: str, sampling_key: str, prefix: int) -> str:
        return f"{context_key}|{sampling_key}|{prefix}"

    def mark(self) -> None:
        self._since = time.perf_counter()

    def check_time(self) -> None:
        if time.perf_counter() > self.deadline:
            raise OutOfTime

    def snapshot(self) -> dict:
        return {"rollouts": self.rollouts, "seconds": self.seconds, "rows": self.rows}

    def clear(self) -> None:
        """A trace is finished: its record holds what is needed, so its rollouts' texts are dropped."""
        self.rollouts, self.seconds, self.rows = {}, {}, {}

    def state_seconds(self) -> float:
        return float(sum(self.seconds.values()))

    def put_row(self, trace_id: str, row: str, score: np.ndarray, tokens: float, seconds: float) -> None:
        self.rows[f"{trace_id}|{row}"] = {"score": np.asarray(score).tolist(), "tokens": tokens, "seconds": seconds}
        self.on_save()

    def row(self, trace_id: str, row: str) -> dict | None:
        return self.rows.get(f"{trace_id}|{row}")

    # CacheBackend: rollouts only (token stats and scores are recomputed; a cold cache is part of each row's cost)
    def load_stats(self, context_key):
        return None

    def save_stats(self, context_key, stats) -> None:
        pass

    def load_scores(self, context_key, series_key):
        return {}

    def save_scores(self, context_key, series_key, scores) -> None:
        pass

    def load_rollouts(self, context_key: str, sampling_key: str, prefix: int) -> list[Rollout]:
        return [Rollout(**r) for r in self.rollouts.get(self.key(context_key, sampling_key, prefix), [])]

    def save_rollouts(self, context_key: str, sampling_key: str, rollouts: list[Rollout]) -> None:
        now = time.perf_counter()
        for rollout in rollouts:
            key = self.key(context_key, sampling_key, rollout.prefix)
            self.rollouts.setdefault(key, []).append(asdict(rollout))
        if rollouts:
            key = self.key(context_key, sampling_key, rollouts[0].prefix)
            self.seconds[key] = self.seconds.get(key, 0.0) + now - self._since
        self._since = now
        self.on_save()
        self.check_time()

    def put_context(self, *args) -> None:
        pass

    def result(self, result_key):
        return None

    def put_result(self, *args) -> None:
        pass


def segmenter_of(args: argparse.Namespace):
    options = {"k": args.k} if args.k else {}
    return segmenters.get(args.segmenter)(**options)


def score_trace(
    lm: LanguageModel, sampler: Sampler, drawn: dict, args: argparse.Namespace, store: RolloutStore | None = None
) -> TraceResult:
    """Every row on one trace, each on a cold cache (so its cost is its own), Monte Carlo's rollouts drawn by
    ``sampler``; no scores when not usable. With ``drawn["carried"]`` (the trace's record in ``--mc-from``'s file)
    only Monte Carlo is drawn: the other rows never sample, so the grader cannot change them: they are carried.
    With ``store`` every state's rollouts and every row are stored as they are made, and what it already holds
    (a trace stopped by the time budget) is taken from it; it raises ``OutOfTime`` between states and rows."""
    carried = drawn.get("carried")
    rows_set = getattr(args, "rows", "full")
    ns = mc_ns(rows_set)
    trace = as_trace(drawn, lm.name)
    segmenter = segmenter_of(args)
    analysis_config = AnalysisConfig(scope="whole", boundaries="segmenter")  # the answer line is the last segment
    cache = BoundaryCache(backend=store) if store is not None else None
    mc_analyzer = Analyzer(lm, analysis_config, sampler=sampler, cache=cache)
    mc = estimators.get("mc")(
        rollouts=REFERENCE_N + max(ns),
        max_new_tokens=args.mc_max_tokens,
        batch_size=REFERENCE_N + max(ns),
        stop_strings=BUILTIN_STOP,
    )
    if store is not None:
        store.mark()
    started = time.perf_counter()
    analysis = mc_analyzer.analyze(trace, segmenter, mc)
    # with a store, MC's seconds are its states' own (drawn in this sitting or an earlier one); else measured
    mc_seconds = store.state_seconds() if store is not None else time.perf_counter() - started
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
    result = TraceResult(trace, drawn["problem"], drawn["split"], segmentation.k, reference, reference_values)
    result.truncated = sum(r.truncated for rollouts in per_state for r in rollouts[:REFERENCE_N])
    result.rollouts = REFERENCE_N * len(per_state)
    result.outcomes = [outcome_string(rollouts) for rollouts in per_state]
    result.wall_seconds = mc_seconds
    if segmentation.k < 3 or np.ptp(reference[:-1]) == 0:
        return result
    generated_all = sum(r.tokens for rollouts in per_state for r in rollouts)
    for n in (*ns, REFERENCE_N):
        indices = range(REFERENCE_N, REFERENCE_N + n) if n in ns else range(REFERENCE_N)
        name = f"mc{n}" if n in ns else "mc16"
        result.scores[name] = mc_sigma(indices)
        generated = sum(rollouts[i].tokens for rollouts in per_state for i in indices)
        result.tokens[name] = len(context.ids) + generated  # one prefill of the trace, then the rollouts
        result.seconds[name] = mc_seconds * generated / max(generated_all, 1)
    if carried is not None:
        if carried["k"] != segmentation.k or carried["cot"] != trace.cot:
            raise RuntimeError(f"{trace.trace_id}: --mc-from's record has another text or K than this trace")
        for table in ("scores", "tokens", "seconds"):
            kept = {name: value for name, value in carried[table].items() if not name.startswith("mc")}
            getattr(result, table).update({n: np.asarray(v) for n, v in kept.items()} if table == "scores" else kept)
        return result

    def scored(row: str, run) -> None:
        """One row: from the store when an earlier sitting scored it, else ``run()`` -> (scores, tokens, seconds)."""
        kept = store.row(trace.trace_id, row) if store is not None else None
        if kept is None:
            if store is not None:
                store.check_time()
            score, tokens, seconds = run()
            if store is not None:
                store.put_row(trace.trace_id, row, score, tokens, seconds)
            kept = {"score": score, "tokens": tokens, "seconds": seconds}
        result.scores[row] = np.asarray(kept["score"], dtype=float)
        result.tokens[row], result.seconds[row] = kept["tokens"], kept["seconds"]
        result.wall_seconds += kept["seconds"]

    for row, (name, options) in estimator_rows(rows_set).items():

        def run_estimator(name=name, options=options, row=row):
            analysis = Analyzer(lm, analysis_config).analyze(trace, segmenter, estimators.get(name)(**options))
            if analysis.segmentation.cuts != segmentation.cuts:
                raise RuntimeError(f"{row} segmented {trace.trace_id} differently from MC")
            cost = analysis.cost
            return analysis.sigma, cost.tokens_processed + cost.tokens_generated, cost.seconds

        scored(row, run_estimator)
    for row, (name, options) in attribution_rows(rows_set).items():

        def run_attribution(name=name, options=options):
            analyzer = Analyzer(lm, analysis_config)
            before = lm.meter.total
            started = time.perf_counter()
            comparison = compare(analyzer, trace, segmenter, [name], {name: options})
            cost = lm.meter.total - before
            seconds = time.perf_counter() - started
            return comparison.methods[name].scores, cost.tokens_processed + cost.tokens_generated, seconds

        scored(row, run_attribution)
    return result


def outcome_string(rollouts: list) -> str:
    """One state's rollouts in index order: 1 correct, 0 wrong, t truncated (hit the cap without an answer)."""
    return "".join("1" if r.correct else ("t" if r.truncated else "0") for r in rollouts)


def scored_in_order(
    lm: LanguageModel, sampler: Sampler, todo: list[dict], args: argparse.Namespace, store: RolloutStore | None = None
) -> Iterator[tuple[TraceResult, float]]:
    """Each trace's result and its seconds, in order. With ``--workers N`` the traces are scored by N processes
    of one thread each (a small model's batched sampling gains little from a second thread); no new trace is
    started once ``--minutes`` have passed (a budget of time, never of results, so stopping picks no traces).
    With one worker and a ``store``, the budget also stops between two states of a trace (``OutOfTime``)."""
    deadline = getattr(args, "deadline", None) or (
        time.perf_counter() + 60 * args.minutes if args.minutes else float("inf")
    )
    if args.workers == 1:  # one thread by default: torch's default beside another job made traces 5x slower
        torch.set_num_threads(getattr(args, "threads", 1))
        for drawn in todo:
            if time.perf_counter() > deadline:
                return
            started = time.perf_counter()
            result = score_trace(lm, sampler, drawn, args, store)
            yield result, time.perf_counter() - started
        return
    pool = model_pool(args.workers)
    waiting = iter(todo)
    running: deque = deque()
    for drawn in itertools.islice(waiting, args.workers + 1):  # one queued, so no worker waits for the reader
        running.append(pool.submit(_score_in_worker, drawn, args))
    try:
        while running:
            yield running.popleft().result()
            if time.perf_counter() < deadline:
                for drawn in itertools.islice(waiting, 1):
                    running.append(pool.submit(_score_in_worker, drawn, args))
    finally:  # stopped early: the traces still being scored are not needed
        pool.shutdown(wait=False, cancel_futures=True)
        for process in multiprocessing.active_children():
            process.terminate()


def alternate_splits(todo: list[dict]) -> list[dict]:
    """The traces to score, the splits taken in turn (each in drawn order): an order fixed before scoring, so a
    run stopped by ``--minutes`` leaves both splits about equally large and picks no traces by their results."""
    by_split = [[d for d in todo if d["split"] == s] for s in SPLITS]
    turns = itertools.zip_longest(*by_split)
    return [d for turn in turns for d in turn if d is not None]


_WORKER_SAMPLER: list[Sampler] = []


def _score_in_worker(drawn: dict, args: argparse.Namespace) -> tuple[TraceResult, float]:
    started = time.perf_counter()
    if not _WORKER_SAMPLER:  # built (and a server probed) once per worker process
        _WORKER_SAMPLER.append(sampler_spec_from_args(args).build(worker_model()))
    return score_trace(worker_model(), _WORKER_SAMPLER[0], drawn, args), time.perf_counter() - started
