"""Where RRPO/SRPO resets can land: the steps the trainer cuts failed parents into, measured without training.

Samples ``--problems`` built-in problems x 4 chains from the base policy with the trainer's own sampler and
settings (``quick``), on problems disjoint from the training and held-out split that ``bench/trainer.py`` uses,
so a cut rule is checked here and scored there. Each failed chain (a parent) is cut by the trainer's own
``parent_steps`` for each ``--reset-steps`` value. A uniform reset (RRPO, and SRPO when its localiser reply does
not parse and the fallback is ``random``) starts from the empty prefix with chance 1/H for a parent of H steps,
so the expected share of empty-prefix resets is the mean of 1/H over parents. Control: the same parents cut by
the former fallback for short parents (``fixed_tokens``, which rounds its piece length up and can snap two cuts
to one word start) instead of ``word_starts``.

Last line (for the default ``reset_steps``): ``parents uniform_empty_chance former_uniform_empty_chance
parents_under_4_steps_share former_parents_under_4_steps_share answer_only_share`` and the default.
"""

from __future__ import annotations

import argparse
import collections
import time
from dataclasses import replace

import numpy as np
import torch

from rredcot_viz.model.catalogue import DEFAULT_MODEL
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.scoring.plan import ResponseTokens
from rredcot_viz.segmenters import segmenters
from rredcot_viz.training import builtin_split, quick
from rredcot_viz.training.methods.base import SampleRequest
from rredcot_viz.training.methods.resets import ResetConfig, parent_steps
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.sampler import RolloutSampler
from rredcot_viz.training.task import builtin_problems


def selection_problems(count: int) -> list:
    """``count`` built-in problems that are in neither the trainer bench's training nor its held-out set."""
    train, held_out = builtin_split(train=200, held_out=32, seed=0)
    used = {p.question for p in train + held_out}
    pool = [p for p in builtin_problems(count + len(used), seed=1) if p.question not in used]
    return pool[:count]


def former_step_count(lm: LanguageModel, parent: TrainRollout, config: ResetConfig) -> int:
    """The control: the parent's step count under the former cut, the trainer's except that a parent the trainer
    cuts at word starts (too few line pieces) was cut by ``fixed_tokens``."""
    steps = parent_steps(lm, parent, config)
    if parent.info["reset_segmenter"] != "word_starts":
        return len(steps)
    entropies = parent.info.get("entropies")
    response = ResponseTokens.from_ids(lm, parent.completion_ids)
    inp = response.segmenter_input("whole", None if entropies is None else np.asarray(entropies))
    return len(segmenters.get("fixed_tokens")(k=config.credit.k).segment(inp).segments)


def cut_figures(lm: LanguageModel, parents: list[TrainRollout], config: ResetConfig) -> tuple[dict, dict]:
    """The parents' step counts H under ``config``'s cut and under the former one (the control): mean 1/H, the
    share with fewer than 4 steps, and how many parents have each H."""
    steps = np.array([len(parent_steps(lm, p, config)) for p in parents])
    former = np.array([former_step_count(lm, p, config) for p in parents])
    row = {
        "uniform_empty_chance": float(np.mean(1 / steps)),
        "former_uniform_empty_chance": float(np.mean(1 / former)),
        "parents_under_4_steps_share": float(np.mean(steps < 4)),
        "former_parents_under_4_steps_share": float(np.mean(former < 4)),
    }
    return row, dict(sorted(collections.Counter(steps.tolist()).items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=64, help="problems sampled (4 chains each)")
    parser.add_argument("--reset-steps", default="4,5,6,8", help="K values: the steps a parent is cut into")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="catalogue key, model folder or GGUF file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    lm = LanguageModel.load(ModelConfig(source=args.model))
    config = quick(method="rrpo", seed=args.seed)
    sampler = RolloutSampler(lm, config)
    problems = selection_problems(args.problems)
    started = time.perf_counter()
    drawn = sampler.sample([SampleRequest(p, i, 4, (i, "fresh", 0)) for i, p in enumerate(problems)])
    parents = [rollout for rollouts in drawn for rollout in rollouts if rollout.reward < 0.5]
    print(
        f"{args.model}: {len(problems)} problems x 4 chains in {time.perf_counter() - started:.0f} s; "
        f"{len(parents)} failed (parents)"
    )
    if not parents:
        raise SystemExit("no chain failed, so there is no parent to cut; sample more problems")
    answer_only = float(np.mean([p.text.lstrip().lower().startswith("the answer is") for p in parents]))
    print(f"{'reset_steps':>11}  {'E[1/H]':>7}  {'former':>7}  {'H<4':>5}  {'former H<4':>10}  steps (H: parents)")
    headline = {}
    for k in (int(v) for v in args.reset_steps.split(",")):
        row, counts = cut_figures(lm, parents, replace(config, credit=replace(config.credit, k=k)))
        print(
            f"{k:>11}  {row['uniform_empty_chance']:7.3f}  {row['former_uniform_empty_chance']:7.3f}  "
            f"{row['parents_under_4_steps_share']:5.2f}  {row['former_parents_under_4_steps_share']:10.2f}  {counts}"
        )
        if k == config.credit.k:
            headline = row
    lengths = np.array([len(p.completion_ids) for p in parents])
    print(
        f"parent tokens: median {np.median(lengths):.0f}, 10-90% {np.percentile(lengths, 10):.0f}-"
        f"{np.percentile(lengths, 90):.0f}; parents that open with 'The answer is': {answer_only:.2f}"
    )
    if not headline:
        raise SystemExit(f"--reset-steps did not include the default ({config.credit.k}), so no headline")
    print(
        f"parents={len(parents)} "
        + " ".join(f"{key}={value:.3f}" for key, value in headline.items())
        + f" answer_only_share={answer_only:.3f} reset_steps={config.credit.k}"
    )


if __name__ == "__main__":
    main()
