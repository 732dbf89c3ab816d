"""Does RREDCoT's per-segment credit agree with Monte Carlo where it matters? Estimators, attributions and
controls against an MC(16) reference, on traces where MC has something to say (embedded model, CPU).

Traces: the model's own sampled solutions (T 0.7, up to 512 new tokens) on built-in one-operation problems
(on the two-operation kind its pass rate was 0.03, so none would be in band), drawn with ``--seed`` from a pool
that leaves out every problem of the earlier protocol's seed (``--exclude-seed``: the traces that chose
today's defaults). Each problem gets ``--screen`` samples; a problem with a pass rate in [0.2, 0.8] gives one
correct and one failed trace: the first, in seed order, that ends by stating its answer after at least
``--min-lines`` - 1 lines of working. Before anything is scored, each problem (both its traces) is assigned to
the **selection** or the **evaluation** split by a seeded hash of its question (``--split-seed``).

Segments: ``--segmenter`` (with ``--k``) over the whole response, so the last segment is the one that writes
the answer. Reference: MC with 16 rollouts per state (up to ``--mc-max-tokens`` new tokens, T 0.7). A trace is
usable when it has >= 3 segments and its MC sigma is not constant over the non-final segments; the headline
uses the usable traces with >= ``--min-nonfinal`` non-final segments (a trace with two non-final segments can
only score +1 or -1, a sign test), and pairwise-order agreement pools every ordered pair of non-final segments
of every usable trace (a trace with m non-final segments gives m(m-1)/2 pairs).

Rows: Q-hat (RREDCoT) for each v-hat proposal and aggregation, R-hat alone, v-hat alone, LOO, Shapley,
gradient x input and attention (each with the trace's own answer as target, the default and the paper's
quantity, and with the reference answer), and MC with n = 1, 2, 4 rollouts independent of the reference.
Controls on the same segments: last-segment-only, position (credit = the segment's index, so later segments
always get more) and random. The Q-hat setting is **chosen on the selection split** (pairwise-order agreement,
non-final) and reported on the evaluation split beside the library's default; both splits are printed.
A row beats the controls when the paired bootstrap interval of (row - control) is above 0 for each.
Cost per row: tokens (scored + generated) and seconds per trace, each method on a cold cache (seconds on one
thread: ``--workers`` processes of one thread score the traces, 2 by default for the 2 cores).

Sampling: ``--sampler`` (``local``, the default, or ``openai`` with ``--sampler-url`` etc.: an OpenAI-compatible
server such as vLLM on the same model, probed before the first request) draws the screening samples and every
Monte Carlo rollout; which one is part of the protocol, so a resumed run never mixes backends.

Resumable: every scored trace is written to ``--out`` at once; ``--resume`` continues a run with the same
protocol (more problems with a larger ``--problems``, the traces not yet scored), ``--minutes`` stops starting
traces after that long (never on a result; the splits are scored in turn, so both grow alike), and
``--report-from FILE`` prints the report and the last line again from a saved file, without the model.

Another model and another problem set (issue 42): ``--model KEY`` (a catalogue key, e.g. qwen2.5-coder-1.5b after
``fetch-model KEY --convert``) with ``--quantization none|8bit|4bit``, ``--dtype`` and ``--device`` (cpu, or cuda
on a GPU machine: ``bench/compare_cuda.sh``; asked on a CPU it refuses); ``--problems-from gsm8k`` (the problems
of ``../shared/data/gsm8k/test.jsonl`` in a seeded order, read at run time; Y* after ``####``, U* the rationale);
``--rows issue42`` scores only that issue's rows (RREDCoT at its defaults, R-hat alone, v-hat alone, LOO, MC(1)
and MC(2) after the reference's 16 rollouts, and the controls; no Shapley, gradient, attention or estimator
grid) and reports them bootstrapped by problem (both traces of a problem resampled together), with
``--segmenter hybrid`` (the library's default) at ``--k 6``. The model, its precision (dtype and quantization as
loaded), the problem set, the row set and the estimator's and segmenter's settings are part of the protocol.
With one worker every state's rollouts and every row's score are stored in ``--out`` as they are made (a trace
in progress is picked up at the state where it stopped), and ``--minutes`` stops between states.

Last line: ``traces_drawn traces_usable selection_traces evaluation_traces headline_traces
min_nonfinal_segments k_counts selected_qhat rredcot_spearman_nonfinal ... rredcot_pairs_nonfinal
position_pairs_nonfinal ... rredcot_beats_controls`` (the figures are on the evaluation split; see docs/BENCHES.md).
With ``--rows issue42``: ``model traces_scored problems mc_split_half rredcot_pairs rredcot_over_ceiling
rhat_only_pairs vhat_only_pairs position_pairs reverse_position_pairs mc2_pairs_at_equal_cost minutes_per_trace``
and then a few more (usable traces, RREDCoT's interval, LOO, MC(1), MC(2)'s tokens over RREDCoT's, precision).
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from workers import model_pool, worker_model

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
from rredcot_viz.cli.model_commands import add_sampler_arguments, sampler_from_args, sampler_spec_from_args
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.estimators.rredcot import RREDCoTConfig
from rredcot_viz.model.backends import Sampler
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.paths import PROJECT_ROOT, shared_data_dir
from rredcot_viz.scoring.cache import BoundaryCache
from rredcot_viz.segmenters import segmenters
from rredcot_viz.stats import bootstrap_mean, bootstrap_ratio, held_out_split
from rredcot_viz.stats import paired_bootstrap_ratio_difference as ratio_difference
from rredcot_viz.traces.answers import GRADING, answers_equivalent, extract_answer, extract_answer_detailed
from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.sampler import problem_prompt
from rredcot_viz.training.task import BUILTIN_STOP, Problem, builtin_problems, reward
from rredcot_viz.types import Rollout
from rredcot_viz.workflows.compare import compare

OUT = PROJECT_ROOT / "bench" / "out"
REFERENCE_N = 16
MC_NS = (1, 2, 4)  # drawn after the reference's 16, so independent of it
PROPOSALS = ("remaining", "whole")
PATH_AGGREGATIONS = ("geo_mean", "seq_prob", "mean_prob")
CONTROLS = ("last_segment", "position", "reverse_position", "random")
ATTRIBUTIONS = ("loo", "shapley", "grad_x_input", "attention")
SPLITS = ("selection", "evaluation")
# what must match for a resumed run to add traces to a saved one
PROTOCOL = ("seed", "exclude_seed", "split_seed", "screen", "min_lines", "segmenter", "k", "mc_max_tokens", "sampler",
            "model", "quantization", "problems_from", "rows")  # fmt: skip
# a protocol saved before --sampler existed sampled locally; before the grader read the state, MC graded the rollout;
# before --model and --rows, every run was the embedded model in full precision on built-in problems, every row
SAVED_BEFORE = {"sampler": "local", "grading": "rollout", "model": "embedded", "quantization": "none",
                "problems_from": "builtin", "rows": "full"}  # fmt: skip
ROW_SETS = ("full", "issue42")
LEAN_ESTIMATORS = ("rredcot", "answer_only", "v_hat[whole,geo_mean]")  # Q-hat at its defaults, R-hat, its v-hat
LEAN_ATTRIBUTIONS = ("loo",)
LEAN_MC_NS = (1, 2)
PROBLEM_SOURCES = ("builtin", "gsm8k")
GSM8K_FILE = ("gsm8k", "test.jsonl")


def mc_ns(rows: str) -> tuple[int, ...]:
    """The Monte Carlo budgets scored beside the reference (drawn after its 16 rollouts, so independent of it)."""
    return LEAN_MC_NS if rows == "issue42" else MC_NS


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


def estimator_rows(rows_set: str = "full") -> dict[str, tuple[str, dict]]:
    """Row name -> (estimator, options): Q-hat per v-hat setting, R-hat alone, v-hat alone (``issue42``: Q-hat at
    its defaults, R-hat alone and the default's own v-hat alone)."""
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
    return {name: rows[name] for name in LEAN_ESTIMATORS} if rows_set == "issue42" else rows


def attribution_rows(rows_set: str = "full") -> dict[str, tuple[str, dict]]:
    """Row name -> (attribution, options): the default target (the trace's own answer) and the reference
    (``issue42``: LOO with its default target only)."""
    rows: dict[str, tuple[str, dict]] = {}
    for name in ATTRIBUTIONS:
        rows[name] = (name, {})
        rows[f"{name}[reference]"] = (name, {"target": "reference"})
    return {name: rows[name] for name in LEAN_ATTRIBUTIONS} if rows_set == "issue42" else rows


@dataclass
class TraceResult:
    trace: Trace
    problem: int
    split: str
    k: int
    reference: np.ndarray  # MC(16) sigma
    reference_values: np.ndarray
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    tokens: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    truncated: int = 0
    rollouts: int = 0
    outcomes: list[str] = field(default_factory=list)  # per non-final state, every rollout: 1 right, 0 wrong, t cap
    wall_seconds: float = 0.0  # the trace's own seconds: its states' sampling and its rows (over every sitting)

    @property
    def usable(self) -> bool:
        return bool(self.scores)


# ---------------------------------------------------------------------------------------------- drawing traces
def problem_pool(count: int, seed: int, source: str = "builtin") -> list[Problem]:
    """The first ``count`` one-operation built-in problems from ``seed``, or (``gsm8k``) the first ``count`` GSM8K
    test problems in an order shuffled by ``seed``; prefix-stable either way: asking for more problems keeps the
    first ``count``, so a resumed run screens only the new ones."""
    if source == "gsm8k":
        return gsm8k_problems(seed)[:count]
    return one_operation(builtin_problems(6 * count + 60, seed=seed))[:count]


def gsm8k_file() -> Path:
    return shared_data_dir().joinpath(*GSM8K_FILE)


def gsm8k_problems(seed: int) -> list[Problem]:
    """Every problem of ``../shared/data/gsm8k/test.jsonl`` (read at run time, never copied), in an order shuffled
    by ``seed``: the question alone as the user turn (the trainer's system prompt asks for 'The answer is N.'),
    Y* the text after ``####``, U* the rationale without its calculator annotations (the gsm8k importer's
    mapping). Raises ``FileNotFoundError`` naming the file when it is absent."""
    from rredcot_viz.traces.importers.gsm8k import Gsm8kImporter

    path = gsm8k_file()
    if not path.is_file():
        raise FileNotFoundError(f"--problems-from gsm8k needs {path} (shared/data's GSM8K test set); it is absent")
    importer = Gsm8kImporter()
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    problems = []
    for line in lines:
        (trace,) = importer.convert(json.loads(line))
        problems.append(Problem(trace.question, trace.reference_answer, trace.reference_solution, source="gsm8k"))
    order = np.random.default_rng(seed).permutation(len(problems))
    return [problems[i] for i in order]


def excluded_questions(exclude_seed: int | None) -> set[str]:
    """The problems the earlier protocol drew its traces from (its first 40 one-operation problems with
    ``exclude_seed``): they chose today's defaults, so none of them gives a trace here."""
    if exclude_seed is None:
        return set()
    return {p.question for p in one_operation(builtin_problems(120, seed=exclude_seed))[:40]}


def one_operation(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.solution.count("\n") == 2]


def screen_problems(
    lm: LanguageModel, sampler: Sampler, pool: list[Problem], first: int, args: argparse.Namespace
) -> tuple[list[dict], list[dict]]:
    """Screen ``pool[first:]`` (``--screen`` samples each, row j of problem i seeded seed * 10^5 + 100 i + j):
    every problem's pass rate, and its traces (``draw_from_samples``)."""
    todo = list(range(first, len(pool)))
    config = SamplingConfig(
        0.7, 0.95, max_new_tokens=512, stop_strings=BUILTIN_STOP, stop_on_answer=True, batch_size=64
    )
    rows = [(i, j) for i in todo for j in range(args.screen)]
    prompts = [lm.encode_prompt(problem_prompt(lm, pool[i])) for i, _ in rows]
    result = sampler.sample(prompts, [sample_seed(args.seed, i, j) for i, j in rows], config) if rows else None
    texts = {i: [result.generations[n * args.screen + j].text for j in range(args.screen)] for n, i in enumerate(todo)}
    return draw_from_samples(lm, pool, texts, args)


def sample_seed(seed: int, problem: int, row: int) -> int:
    return seed * 100_000 + 100 * problem + row


def draw_from_samples(
    lm: LanguageModel, pool: list[Problem], texts: dict[int, list[str]], args: argparse.Namespace
) -> tuple[list[dict], list[dict]]:
    """Each screened problem's pass rate, and one correct and one failed trace (as saved) per problem in band
    that the earlier protocol did not use: the first sample, in seed order, with enough lines of working that
    ends by stating its answer."""
    excluded = excluded_questions(args.exclude_seed)
    screened, drawn = [], []
    for i, samples in texts.items():
        problem = pool[i]
        rewards = [reward(text, problem.answer) for text in samples]
        rate = float(np.mean(rewards))
        screened.append({"problem": i, "pass_rate": rate, "excluded": problem.question in excluded})
        if not 0.2 <= rate <= 0.8 or problem.question in excluded:
            continue
        for wanted in (1.0, 0.0):
            pick = next(
                (
                    (j, text)
                    for j, (text, r) in enumerate(zip(samples, rewards, strict=True))
                    if r == wanted and steps_before_answer(text, args.min_lines)
                ),
                None,
            )
            if pick is not None:
                drawn.append(
                    {
                        "trace": f"{problem.source}-{i}-{'correct' if wanted else 'failed'}",
                        "problem": i,
                        "split": held_out_split(problem.question, args.split_seed, SPLITS),
                        "question": problem.question,
                        "prompt": problem_prompt(lm, problem),
                        "cot": pick[1],
                        "reference_answer": problem.answer,
                        "reference_solution": problem.solution,
                        "correct": bool(wanted),
                        "seed": sample_seed(args.seed, i, pick[0]),
                        "pass_rate": rate,
                    }
                )
    return screened, drawn


def as_trace(drawn: dict, generator: str) -> Trace:
    return Trace(
        question=drawn["question"],
        cot=drawn["cot"],
        prompt=drawn["prompt"],
        reference_answer=drawn["reference_answer"],
        reference_solution=drawn["reference_solution"],
        correct=drawn["correct"],
        final_answer=extract_answer(drawn["cot"]),
        source="generated",
        trace_id=drawn["trace"],
        metadata={"generator": generator, "seed": drawn["seed"], "pass_rate": drawn["pass_rate"]},
    )


def steps_before_answer(text: str, min_lines: int = 3) -> bool:
    """At least ``min_lines`` - 1 lines of working, then the answer stated on the last line."""
    lines = [line for line in text.splitlines() if line.strip()]
    found = extract_answer_detailed(text)
    stated = found is not None and found.method != "last_number"
    return len(lines) >= min_lines and stated and found.start > text.rstrip().rfind("\n")


# ---------------------------------------------------------------------------------------------- scoring
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


# ---------------------------------------------------------------------------------------------- the saved file
def default_row() -> str:
    """The ablation row that the 'rredcot' row (the estimator's defaults) equals."""
    default = RREDCoTConfig()
    return f"rredcot[{default.path_proposal},{default.path_aggregation}]"


def record(result: TraceResult, mc_max_tokens: int) -> dict:
    return {
        "trace": result.trace.trace_id,
        "problem": result.problem,
        "split": result.split,
        "cot": result.trace.cot,
        "outcome": result.trace.outcome,
        "own_answer": result.trace.answer,
        "reference_answer": result.trace.reference_answer,
        "k": result.k,
        "mc16_values": result.reference_values.tolist(),
        "mc16_sigma": result.reference.tolist(),
        "scores": {name: v.tolist() for name, v in result.scores.items()},
        "tokens": result.tokens,
        "seconds": result.seconds,
        "rredcot_is": default_row(),
        "mc_max_new_tokens": mc_max_tokens,
        "truncated": result.truncated,
        "rollouts": result.rollouts,
        "mc_outcomes": result.outcomes,
        "wall_seconds": result.wall_seconds,
    }


def from_record(saved: dict) -> TraceResult:
    """A scored trace as saved, with 'rredcot' meaning today's defaults (the row it equalled is renamed)."""
    trace = Trace(
        "(not saved)",
        saved["cot"],
        correct=bool(saved["outcome"]),
        trace_id=saved["trace"],
        final_answer=saved.get("own_answer"),
        reference_answer=saved.get("reference_answer"),
    )
    result = TraceResult(
        trace,
        saved["problem"],
        saved["split"],
        saved["k"],
        np.asarray(saved["mc16_sigma"]),
        np.asarray(saved["mc16_values"]),
    )
    result.scores = {name: np.asarray(v) for name, v in saved["scores"].items()}
    result.tokens, result.seconds = dict(saved["tokens"]), dict(saved["seconds"])
    result.truncated, result.rollouts = saved.get("truncated", 0), saved.get("rollouts", 0)
    result.outcomes = saved.get("mc_outcomes", [])
    result.wall_seconds = saved.get("wall_seconds", 0.0)
    was, now = saved["rredcot_is"], default_row()
    if result.scores and was != now and now in result.scores:
        for table in (result.scores, result.tokens, result.seconds):
            table[was], table["rredcot"] = table.pop("rredcot"), table.pop(now)
    return result


def save(
    path: Path,
    protocol: dict,
    screened: list[dict],
    drawn: list[dict],
    results: list[TraceResult],
    in_progress: dict | None = None,
    extra: dict | None = None,
) -> None:
    """The whole run: protocol, screening, drawn and scored traces, and (``in_progress``) the trace being scored:
    its states' rollouts and its rows so far, so a stopped run resumes at the state where it stopped."""
    payload = {
        "protocol": protocol,
        "screened": screened,
        "drawn": drawn,
        "traces": [record(r, protocol["mc_max_tokens"]) for r in results],
    }
    if in_progress and any(in_progress.values()):
        payload["in_progress"] = in_progress
    payload |= extra or {}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(payload, indent=1))
    temporary.replace(path)  # a run stopped mid-write keeps the previous file whole


# ---------------------------------------------------------------------------------------------- main
def check_device(device: str) -> None:
    """Refuse a CUDA run where there is no CUDA device, before anything is loaded."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(
            f"--device {device}: this machine has no CUDA device (torch.cuda.is_available() is False); the CUDA "
            "protocol runs on a GPU machine (bench/compare_cuda.sh); on a CPU leave --device out (cpu)"
        )


def protocol_of(args: argparse.Namespace) -> dict:
    """What must match for a resumed run to add to a saved one (the loaded precision is added after the load)."""
    protocol = {key: getattr(args, key) for key in PROTOCOL} | {"min_nonfinal": args.min_nonfinal, "grading": GRADING}
    if args.rows == "issue42":  # the estimator and segmenter settings, fixed before any scoring
        protocol["segmenter_settings"] = asdict(segmenter_of(args).config)
        protocol["estimator_settings"] = asdict(RREDCoTConfig())
        protocol["mc_ns"] = [REFERENCE_N, *LEAN_MC_NS]
    return json.loads(json.dumps(protocol))  # as saved (tuples are lists there), so a resume compares like with like


def protocol_mismatch(saved_protocol: dict, protocol: dict) -> dict:
    """The keys both protocols state, with different values (a key an older file lacks takes SAVED_BEFORE's)."""
    saved_protocol = SAVED_BEFORE | saved_protocol
    return {k: (saved_protocol[k], v) for k, v in protocol.items() if k in saved_protocol and saved_protocol[k] != v}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=60, help="problems to screen (in all, when resuming)")
    parser.add_argument("--screen", type=int, default=16, help="samples per problem for its pass rate")
    parser.add_argument("--min-lines", type=int, default=3, help="a trace has at least this many non-empty lines")
    parser.add_argument("--segmenter", default="fixed_tokens", help="fixed_tokens: K equal chunks (word starts)")
    parser.add_argument("--k", type=int, default=6, help="the segmenter's target K (0: its default)")
    parser.add_argument("--min-nonfinal", type=int, default=4, help="headline traces have >= this many non-final")
    parser.add_argument("--mc-max-tokens", type=int, default=512)
    parser.add_argument("--seed", type=int, default=11, help="the problems and the screening samples")
    parser.add_argument("--exclude-seed", type=int, default=3, help="leave out this earlier protocol's problems")
    parser.add_argument("--split-seed", type=int, default=0, help="the selection / evaluation split")
    parser.add_argument("--minutes", type=float, default=0, help="start no trace after this long (0: no limit)")
    parser.add_argument(
        "--workers", type=int, default=2, help="processes scoring traces (one thread each; 1 = this process)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads with --workers 1")
    parser.add_argument("--model", default="embedded", help="a catalogue key (fetch-model KEY --convert first)")
    parser.add_argument("--quantization", default="none", choices=("none", "8bit", "4bit"), help="4bit: nf4")
    parser.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    parser.add_argument("--device", default="auto", help="auto, cpu, or cuda (refused where there is no GPU)")
    parser.add_argument("--problems-from", default="builtin", choices=PROBLEM_SOURCES, help="gsm8k: shared/data's")
    parser.add_argument("--rows", default="full", choices=ROW_SETS, help="issue42: that issue's rows only")
    parser.add_argument("--screen-chunk", type=int, default=4, help="--rows issue42: problems screened at a time")
    parser.add_argument("--note", default="", help="a note stored with the run (e.g. why this precision)")
    parser.add_argument("--out", type=Path, default=OUT / "compare_traces.json", help="the per-trace results")
    parser.add_argument("--resume", action="store_true", help="add to --out (same protocol) instead of starting anew")
    parser.add_argument(
        "--mc-from",
        metavar="JSON",
        type=Path,
        help="a saved run: its traces, Monte Carlo drawn again (same protocol), "
        "its rows that never sample carried over (a grader change redraws only what it can change)",
    )
    parser.add_argument("--ta-traces", type=int, default=0, help="Thought Anchors traces to compare (0 = skip)")
    parser.add_argument(
        "--report-from", metavar="JSON", type=Path, help="no model: the report and last line of a saved run again"
    )
    add_sampler_arguments(parser)
    args = parser.parse_args(argv)
    if args.report_from:
        saved = json.loads(args.report_from.read_text())
        results = [from_record(r) for r in saved["traces"]]
        print(f"re-read {len(results)} traces from {args.report_from}; the 'rredcot' row is {default_row()}")
        print(f"protocol: {json.dumps(saved['protocol'])}")
        if saved["protocol"].get("rows") == "issue42":
            print(lean_last_line(report_lean(results, saved), saved))
        else:
            print(last_line(report(results, saved["protocol"]["min_nonfinal"]), saved))
        return
    check_device(args.device)
    lean = args.rows == "issue42"
    if args.workers != 1 and (args.model != "embedded" or args.quantization != "none" or lean):
        raise SystemExit("--model, --quantization and --rows issue42 run in this process: use --workers 1")
    if args.workers == 1:
        torch.set_num_threads(args.threads)  # screening too, not only the traces
    started_all = time.perf_counter()
    args.deadline = started_all + 60 * args.minutes if args.minutes else float("inf")
    protocol = protocol_of(args)
    screened: list[dict] = []
    drawn: list[dict] = []
    results: list[TraceResult] = []
    carried: dict[str, dict] = {}
    kept: dict = {}  # what the saved file holds beside the traces (the trace in progress, timings, notes)
    if args.mc_from:  # the same drawn traces, Monte Carlo drawn again; the rows that never sample carried over
        source = json.loads(args.mc_from.read_text())
        mismatched = protocol_mismatch(source["protocol"], protocol)
        mismatched.pop("grading", None)
        if mismatched:
            raise SystemExit(f"--mc-from: {args.mc_from} was run with another protocol (saved, asked): {mismatched}")
        screened, drawn = source["screened"], source["drawn"]
        carried = {record["trace"]: record for record in source["traces"]}
        print(f"--mc-from {args.mc_from}: its {len(drawn)} drawn traces; Monte Carlo drawn again, graded {GRADING}")
    if args.resume and args.out.is_file():
        saved = json.loads(args.out.read_text())
        mismatched = protocol_mismatch(saved["protocol"], protocol)
        if mismatched:
            raise SystemExit(f"--resume: {args.out} was run with another protocol (saved, asked): {mismatched}")
        screened, drawn = saved["screened"], saved["drawn"]
        results = [from_record(r) for r in saved["traces"]]
        kept = {key: saved[key] for key in ("in_progress", "run") if key in saved}
        print(f"resuming {args.out}: {len(screened)} problems screened, {len(results)} of {len(drawn)} traces scored")
    config = ModelConfig(source=args.model, quantization=args.quantization, dtype=args.dtype, device=args.device)
    lm = LanguageModel.load(config)
    protocol["precision"] = f"{lm.dtype}/{lm.quantization}"  # as loaded: a resumed run never mixes precisions
    if args.resume and args.out.is_file():
        mismatched = protocol_mismatch(json.loads(args.out.read_text())["protocol"], protocol)
        if mismatched:
            raise SystemExit(f"--resume: {args.out} was run with another precision (saved, asked): {mismatched}")
    sampler = sampler_from_args(args, lm)
    run = kept.get("run", {}) | {"device": lm.device, "note": args.note or kept.get("run", {}).get("note", "")}
    run.setdefault("screen_seconds", 0.0)
    run.setdefault("sittings", [])
    run["sittings"].append({"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": lm.device})

    def write() -> None:
        save(args.out, protocol, screened, drawn, results, store.snapshot() if store else None, {"run": run})

    store = RolloutStore(kept.get("in_progress"), write, args.deadline) if args.workers == 1 else None
    write()
    pool = [] if args.mc_from else problem_pool(args.problems, args.seed, args.problems_from)
    stopped = ""
    while not stopped:
        done = {r.trace.trace_id for r in results}
        todo = alternate_splits([d | {"carried": carried.get(d["trace"])} for d in drawn if d["trace"] not in done])
        if len(screened) < len(pool) and (not lean or not todo):
            if time.perf_counter() > args.deadline:
                stopped = "the time budget (--minutes) ran out before screening more problems"
                break
            first = len(screened)
            upto = first + args.screen_chunk if lean else len(pool)
            started = time.perf_counter()
            new_screened, new_drawn = screen_problems(lm, sampler, pool[:upto], first, args)
            run["screen_seconds"] += time.perf_counter() - started
            screened, drawn = screened + new_screened, drawn + new_drawn
            rates = [s["pass_rate"] for s in new_screened]
            print(
                f"{lm.name}: screened {len(new_screened)} more {args.problems_from} problems x {args.screen} samples "
                f"(pass rates {', '.join(f'{r:.2f}' for r in rates)}); {sum(0.2 <= r <= 0.8 for r in rates)} in "
                f"[0.2, 0.8], {sum(s['excluded'] for s in new_screened)} left out as the earlier protocol's; "
                f"{len(new_drawn)} traces ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
            write()
            continue
        if not todo:
            break
        print(f"split before scoring: {Counter(d['split'] for d in drawn)}; {len(todo)} traces to score", flush=True)
        try:
            for count, (result, seconds) in enumerate(scored_in_order(lm, sampler, todo, args, store), 1):
                results.append(result)
                if store:
                    store.clear()
                write()
                nonfinal = result.k - 1
                status = "usable" if result.usable else ("K < 3" if result.k < 3 else "MC constant before the end")
                print(
                    f"[{count}/{len(todo)}] {result.trace.trace_id} ({result.split}): K={result.k} ({nonfinal} "
                    f"non-final) R={result.trace.outcome:.0f} MC values {np.round(result.reference_values, 2).tolist()}"
                    f" {status} ({seconds:.0f} s in this sitting, {result.wall_seconds:.0f} s in all)",
                    flush=True,
                )
        except OutOfTime:
            stopped = "the time budget (--minutes) ran out between two states; --resume goes on from there"
        if time.perf_counter() > args.deadline and not stopped:
            stopped = "the time budget (--minutes) ran out"
        if not lean:
            break
    write()
    print(f"\n{len(results)} of {len(drawn)} drawn traces scored ({time.perf_counter() - started_all:.0f} s)")
    if stopped:
        print(f"stopped: {stopped}")
    saved = json.loads(args.out.read_text())
    if lean:
        line = lean_last_line(report_lean(results, saved), saved)
        again = lean_last_line(report_lean([from_record(r) for r in saved["traces"]], saved, quiet=True), saved)
    else:
        headline = report(results, args.min_nonfinal)
        if args.ta_traces:
            thought_anchors(lm, args.ta_traces)
        line = last_line(headline, saved)
        again = last_line(report([from_record(r) for r in saved["traces"]], args.min_nonfinal, quiet=True), saved)
    if again != line:  # the saved file must give back exactly what was printed (--report-from relies on it)
        raise RuntimeError(f"the saved per-trace file does not reproduce the run:\n{line}\n{again}")
    print(f"(the saved file {args.out} reproduces this line with --report-from)")
    print(line)


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


# ---------------------------------------------------------------------------------------------- the report
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


# ---------------------------------------------------------------------------------------------- issue 42's report
LEAN_ROWS = ("rredcot", "answer_only", "v_hat[whole,geo_mean]", "loo", "mc1", "mc2")
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


if __name__ == "__main__":
    main()
