"""What RREDCoT credit costs at real lengths, beside the former packing as the control.

Part 1, tokens (``--lengths`` 256, 1,024, 4,096 completion tokens x ``--ks`` K = 4, 8, 16, groups of 8): a group
of the built-in task's prompt with completions of exactly that many tokens (working lines, then the answer
line; the embedded model's tokenizer), segmented by the trainer's hybrid segmenter with at most K segments and
credited with the default estimator (``rredcot``: R-hat and v-hat over the reference solution). It prints the
tokens the credit call runs through the model per completion token: today's packing (the prompt once per group,
each completion once up to its last scored state, each state's continuation blocks after the rollout's own
cache) beside the control (every state re-encodes its rollout prefix after the prompt, cost ~ K x T). Token
counts do not depend on the weights, so a narrow random model of the same tokenizer runs them. Beside them: the
same packing with R-hat alone (``answer_only``, the smallest continuation per state), the largest
difference in sigma between the two packings, and the floor: the fewest tokens any exact method needs for the
same log-probs (``floor_tokens``, counted from the credit plan). Where the floor is above 1.5, no packing that
keeps the estimator's numbers meets the 1.5 target.

Part 2, seconds (``--step-length`` 1,024, the embedded model): GRPO and RREDCoT-GRPO trainers (quick preset, one
prompt x 8 rollouts, K = 4) advancing one step in turn, every rollout forced to the full length (end-of-text
and stop strings ignored while sampling: the bench turns the policy's stop_early off); the ratio
of their step times (median over ``--steps`` pairs; one pair takes about 10 minutes on 2 CPU cores),
RREDCoT's credit seconds / (sampling + update) seconds, and the control's credit on the same rollouts (the first
``--control-steps`` steps). Both policies sample a few tokens first, so no first-call allocation is timed.

Part 3 (``--trl``): one TRL step each of ``GRPOTrainer`` and ``RREDCoTGRPOTrainer`` at each of ``--trl-lengths``
(``min_new_tokens`` forces the length), for a GPU run.

    /work/bin/quiet .venv/bin/python bench/credit_cost.py                         # CPU: parts 1 and 2
    .venv/bin/python bench/credit_cost.py --device cuda --random-model --trl \\
        --lengths 1024,4096 --step-length 4096 --dtype bfloat16                     # a GPU, no files needed

Last line: ``max_credit_tokens_over_completion=... rredcot_over_grpo_step_time_1k=...
control_max_tokens_over_completion=... floor_max_tokens_over_completion=...``.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from dataclasses import dataclass, replace

import numpy as np
import torch

from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.packing import Continuation
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.training import CreditConfig, Trainer, builtin_split, quick
from rredcot_viz.training.credit import (
    GroupPlanner,
    RolloutPlan,
    credit_estimator,
    group_sigmas,
    scorable,
    segment_rollout,
)
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.sampler import problem_prompt
from rredcot_viz.training.task import Problem

GROUP = 8
SMOLLM2_135M = dict(  # the embedded model's shape, for a random model on a machine without its files
    hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
    rope_theta=100000.0, rms_norm_eps=1e-5, tie_word_embeddings=True, max_position_embeddings=8192,
)  # fmt: skip


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def embedded_or_trained_tokenizer(random_model: bool):
    """The embedded model's tokenizer, or (``--random-model`` on a machine without its files) a byte-level BPE
    trained in memory on the built-in task's text."""
    if not random_model:
        return LanguageModel.load().tokenizer
    try:
        return LanguageModel.load().tokenizer
    except Exception:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
        from transformers import PreTrainedTokenizerFast

        problems = builtin_split(200, 1)[0]
        corpus = [p.prompt + p.solution for p in problems]
        backend = Tokenizer(models.BPE())
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        backend.decoder = decoders.ByteLevel()
        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
        trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=specials,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # fmt: skip
        backend.train_from_iterator(corpus, trainer=trainer)
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>",
                                            pad_token="<|endoftext|>")  # fmt: skip
        tokenizer.chat_template = (
            "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
            "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
        )
        return tokenizer


def random_lm(tokenizer, shape: dict, device: str, dtype: torch.dtype, name: str) -> LanguageModel:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tokenizer), eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=None, **shape)  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(device=device, dtype=dtype).eval()
    return LanguageModel(model, tokenizer, name=name, fingerprint=name, device=device, dtype=str(dtype).split(".")[-1])


def narrow_lm(tokenizer, device: str) -> LanguageModel:
    """Token counts only: two narrow layers, the real tokenizer."""
    shape = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=16384, tie_word_embeddings=False)  # fmt: skip
    return random_lm(tokenizer, shape, device, torch.float32, "narrow-random")


def prompt_packed_sigmas(
    policy: LanguageModel,
    credit: CreditConfig,
    estimator: ValueEstimator,
    prompt: list[int],
    rollouts: list[TrainRollout],
    problem: Problem,
) -> list[np.ndarray]:
    """The former packing, the control (and tests/bench's reference for ``group_sigmas``): the same requests as
    ``group_sigmas`` (the trainer's ``GroupPlanner``), but every state of every rollout re-encodes its rollout
    prefix as a continuation of the prompt (cost ~ K x T)."""
    planner = GroupPlanner(policy, credit, estimator, prompt, problem)
    plans: dict[int, RolloutPlan] = {}
    unique: dict[Continuation, int] = {}
    rows: dict[int, list[int]] = {}
    for index, rollout in enumerate(rollouts):
        rollout.info["credit_estimator"] = estimator.name
        if not scorable(rollout):
            if not rollout.segments:
                segment_rollout(policy, rollout, credit)
            continue
        plans[index] = planner.plan(rollout)
        rows[index] = [
            unique.setdefault(
                Continuation(len(prompt), tuple(rollout.completion_ids[: r.cut - len(prompt)]) + r.context, r.target),
                len(unique),
            )
            for r in plans[index].requests
        ]
    scores = policy.score_continuations(prompt, list(unique), operation="credit").logprobs if unique else []
    sigmas = [np.array([rollout.reward]) for rollout in rollouts]
    for index, plan in plans.items():
        sigmas[index] = planner.sigma(rollouts[index], plan, [scores[i] for i in rows[index]])
    return sigmas


def working_group(lm: LanguageModel, problem: Problem, length: int, seed: int) -> tuple[list[int], list[TrainRollout]]:
    """The problem's prompt and GROUP completions of exactly ``length`` tokens: working lines in the task's style,
    then the answer line; rewards alternate so the group has variance; entropies drawn as if recorded."""
    rng = np.random.default_rng(seed)
    prompt = lm.encode_prompt(problem_prompt(lm, problem))
    rollouts = []
    for i in range(GROUP):
        lines = []
        total = 0
        while total < length:
            a, b = (int(x) for x in rng.integers(1, 50, 2))
            line = f"Then {a} + {b} = {a + b}, so there are {a + b} now.\n"
            lines.append(line)
            total += len(lm.encode(line))
        answer = lm.encode(f"The answer is {problem.answer}.")
        ids = lm.encode("".join(lines))[: length - len(answer)] + answer
        rollout = TrainRollout(prompt, ids, lm.decode(ids), float(i % 2 == 0), i)
        rollout.info["entropies"] = rng.uniform(0.0, 3.0, len(ids)).tolist()
        rollouts.append(rollout)
    return prompt, rollouts


@dataclass
class CreditRun:
    tokens: int
    seconds: float
    sigmas: list[np.ndarray]


def run_credit(lm, score, credit, problem, prompt, rollouts) -> CreditRun:
    rollouts = copy.deepcopy(rollouts)
    estimator = credit_estimator(credit, problem)
    before = lm.meter.total
    started = time.perf_counter()
    sigmas = score(lm, credit, estimator, prompt, rollouts, problem)
    return CreditRun((lm.meter.total - before).tokens_processed, time.perf_counter() - started, sigmas)


def floor_tokens(lm: LanguageModel, credit: CreditConfig, problem: Problem, prompt: list[int], rollouts) -> int:
    """The fewest tokens any exact method must run through the model for the log-probs credit reads: every distinct
    position once. The prompt once; each rollout's own tokens up to its last scored cut (the position before a
    cut predicts what follows it); each continuation's context and target but its last token (predicted, never
    read), positions that continuations after the same cut share counted once (a prompt-only cut is the same in
    every rollout). Counted from the credit plan, not from the meter, so it checks the packing."""
    planner = GroupPlanner(lm, credit, credit_estimator(credit, problem), prompt, problem)
    sequence = len(prompt)
    positions: set[tuple] = set()
    for index, rollout in enumerate(rollouts):
        if not scorable(rollout):
            continue
        requests = planner.plan(rollout).requests
        sequence += max(max(r.cut for r in requests) - len(prompt), 0)
        for request in requests:
            after = (request.cut,) if request.cut <= len(prompt) else (index, request.cut)
            path = (*request.context, *request.target[:-1])
            positions.update((after, path[:n]) for n in range(1, len(path) + 1))
    return sequence + len(positions)


def token_table(lm: LanguageModel, lengths: list[int], ks: list[int]) -> tuple[float, float, float]:
    """Part 1: credit tokens / completion tokens, today's packing, the control and the floor, for every length and K;
    returns the worst of each."""
    problem = builtin_split(10, 1)[0][0]
    print(f"part 1: tokens through the model per completion token, groups of {GROUP}, estimator rredcot "
          f"(tokenizer of {lm.tokenizer.name_or_path or 'the bench'}, {lm.name})")  # fmt: skip
    print(f"{'length':>7} {'K':>3} {'segments':>8} {'floor':>6} {'today':>7} {'control':>8} {'R-hat only':>10} "
          f"{'max|dsigma|':>11} {'s today':>8} {'s control':>9}")  # fmt: skip
    worst, worst_control, worst_floor = 0.0, 0.0, 0.0
    for length in lengths:
        prompt, drawn = working_group(lm, problem, length, seed=length)
        for k in ks:
            credit = CreditConfig(k=k)
            rollouts = copy.deepcopy(drawn)
            for rollout in rollouts:  # as the sampler does while sampling: not part of the credit call
                segment_rollout(lm, rollout, credit)
            today = run_credit(lm, group_sigmas, credit, problem, prompt, rollouts)
            control = run_credit(lm, prompt_packed_sigmas, credit, problem, prompt, rollouts)
            r_hat = run_credit(lm, group_sigmas, replace(credit, estimator="answer_only"), problem, prompt, rollouts)
            completion = sum(len(r.completion_ids) for r in rollouts)
            differs = max(float(np.abs(a - b).max()) for a, b in zip(today.sigmas, control.sigmas, strict=True))
            segments = np.mean([len(r.segments) for r in rollouts])
            ratio, control_ratio = today.tokens / completion, control.tokens / completion
            floor = floor_tokens(lm, credit, problem, prompt, rollouts) / completion
            worst, worst_control = max(worst, ratio), max(worst_control, control_ratio)
            worst_floor = max(worst_floor, floor)
            r_hat_ratio = r_hat.tokens / completion
            print(f"{length:7d} {k:3d} {segments:8.1f} {floor:6.2f} {ratio:7.2f} {control_ratio:8.2f} "
                  f"{r_hat_ratio:10.2f} {differs:11.1e} {today.seconds:8.1f} {control.seconds:9.1f}",
                  flush=True)  # fmt: skip
    return worst, worst_control, worst_floor


def step_times(lm: LanguageModel, length: int, steps: int, k: int, control_steps: int = 1) -> float:
    """Part 2: GRPO and RREDCoT-GRPO steps in turn at ``length``-token rollouts; the control's credit on the
    RREDCoT step's rollouts."""
    train, held_out = builtin_split(train=50, held_out=1, seed=0)
    trainers = {}
    for method in ("grpo", "rredcot"):
        config = quick(method, steps=steps, prompts_per_step=1, group_size=GROUP, max_new_tokens=length,
                       eval_every=0, k=k, seed=0)  # fmt: skip
        trainers[method] = Trainer(lm, config, train, held_out, run_id=f"credit-cost-{method}")
        trainers[method].policy.stop_early = False  # every rollout runs to the full length
        warm = trainers[method].policy  # first calls allocate: keep that out of the first timed step
        warm.sample([trainers[method].sampler.prompt_ids(train[0])], [0], SamplingConfig(max_new_tokens=4))
    print(f"\npart 2: one prompt x {GROUP} rollouts of {length} tokens, K = {k}, {lm.name} on {lm.device}")
    print(f"{'step':>4} {'grpo s':>7} {'rredcot s':>9} {'ratio':>6} {'sample s':>8} {'credit s':>8} {'update s':>8} "
          f"{'credit/(s+u)':>12} {'control credit s':>16} {'control/(s+u)':>13}")  # fmt: skip
    ratios = []
    for step in range(1, steps + 1):
        grpo, _ = trainers["grpo"].train_step()
        rredcot, groups = trainers["rredcot"].train_step()
        trainer = trainers["rredcot"]
        lengths = {len(r.completion_ids) for g in groups for r in g.rollouts}
        problem = trainer.train_problems[groups[0].problem_index]
        credit = trainer.config.credit
        rest = rredcot["seconds_rollouts"] + rredcot["seconds_update"]
        ratios.append(rredcot["seconds"] / grpo["seconds"])
        shown = "-"
        if step <= control_steps:  # the control's credit on the same rollouts (it costs K x T: not every step)
            control = run_credit(lm=trainer.policy, score=prompt_packed_sigmas, credit=credit, problem=problem,
                                 prompt=trainer.sampler.prompt_ids(problem), rollouts=groups[0].rollouts)  # fmt: skip
            shown = f"{control.seconds:16.1f} {control.seconds / rest:13.2f}"
        print(f"{step:4d} {grpo['seconds']:7.1f} {rredcot['seconds']:9.1f} {ratios[-1]:6.2f} "
              f"{rredcot['seconds_rollouts']:8.1f} {rredcot['seconds_credit']:8.1f} {rredcot['seconds_update']:8.1f} "
              f"{rredcot['seconds_credit'] / rest:12.2f} {shown:>30}  {sorted(lengths)}", flush=True)  # fmt: skip
    return float(statistics.median(ratios))


def trl_steps(lm: LanguageModel, lengths: list[int]) -> None:
    """Part 3: one step of TRL's GRPOTrainer and of RREDCoTGRPOTrainer at each length (paired)."""
    import datasets
    import trl

    from rredcot_viz.training.task import reward
    from rredcot_viz.training.trl_trainer import RREDCoTGRPOTrainer

    problems = builtin_split(8, 1)[0]
    data = datasets.Dataset.from_list([{"prompt": p.prompt, "answer": p.answer, "solution": p.solution}
                                       for p in problems])  # fmt: skip

    def correct(completions, answer, **_):
        return [reward(c, a) for c, a in zip(completions, answer, strict=True)]

    print(f"\npart 3: one TRL step, one prompt x {GROUP} completions, {lm.name} on {lm.device}")
    for length in lengths:
        seconds = {}
        for name, trainer_type in (("grpo", trl.GRPOTrainer), ("rredcot", RREDCoTGRPOTrainer)):
            args = trl.GRPOConfig(output_dir="/tmp/credit-cost-trl", per_device_train_batch_size=GROUP,
                                  num_generations=GROUP, max_completion_length=length, max_steps=1,
                                  generation_kwargs={"min_new_tokens": length}, report_to="none",
                                  save_strategy="no", disable_tqdm=True, use_cpu=lm.device == "cpu",
                                  bf16=lm.model.dtype == torch.bfloat16)  # fmt: skip
            extra = {"credit": CreditConfig()} if name == "rredcot" else {}
            trainer = trainer_type(copy.deepcopy(lm.model), reward_funcs=[correct], args=args, train_dataset=data,
                                   processing_class=lm.tokenizer, **extra)  # fmt: skip
            started = time.perf_counter()
            trainer.train()
            seconds[name] = time.perf_counter() - started
        print(f"{length:6d} tokens: GRPO {seconds['grpo']:.1f} s, RREDCoT {seconds['rredcot']:.1f} s, "
              f"ratio {seconds['rredcot'] / seconds['grpo']:.2f}", flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=ints, default=[256, 1024, 4096], help="part 1 completion lengths")
    parser.add_argument("--ks", type=ints, default=[4, 8, 16], help="part 1 segment counts K")
    parser.add_argument("--step-length", type=int, default=1024, help="part 2 rollout length (0 = skip part 2)")
    parser.add_argument(
        "--steps", type=int, default=1, help="part 2 steps per method (one pair takes ~10 min on 2 CPU cores)"
    )
    parser.add_argument("--control-steps", type=int, default=1, help="part 2 steps that also time the control's credit")
    parser.add_argument("--step-k", type=int, default=4, help="part 2 K (the default credit setting)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--random-model", action="store_true", help="parts 2-3 on a random model of the embedded "
                        "model's shape (no files needed) instead of the embedded model")  # fmt: skip
    parser.add_argument("--model", help="a catalogue key, model folder or GGUF file: part 1's tokenizer and the model "
                        "of parts 2-3 (default: the embedded model)")  # fmt: skip
    parser.add_argument("--trl", action="store_true", help="part 3: TRL steps")
    parser.add_argument("--trl-lengths", type=ints, default=[1024, 4096])
    args = parser.parse_args(argv)
    started = time.perf_counter()
    chosen = LanguageModel.load(ModelConfig(source=args.model, device=args.device)) if args.model else None
    tokenizer = chosen.tokenizer if chosen else embedded_or_trained_tokenizer(args.random_model)
    worst, worst_control, worst_floor = token_table(narrow_lm(tokenizer, args.device), args.lengths, args.ks)
    dtype = getattr(torch, args.dtype)
    if args.random_model:
        lm = random_lm(tokenizer, SMOLLM2_135M, args.device, dtype, "random SmolLM2-135M shape")
    else:
        lm = chosen or LanguageModel.load()
    step_ratio = (
        step_times(lm, args.step_length, args.steps, args.step_k, args.control_steps)
        if args.step_length
        else float("nan")
    )
    if args.trl:
        trl_steps(lm, args.trl_lengths)
    step_target = f", and RREDCoT-GRPO's step <= 1.3 x GRPO's at {args.step_length} tokens" if args.step_length else ""
    print(f"\n{time.perf_counter() - started:.0f} s; target: today's tokens <= 1.5 x the completion at every length "
          f"and K (reachable only where the floor is){step_target}")  # fmt: skip
    print(f"max_credit_tokens_over_completion={worst:.2f} rredcot_over_grpo_step_time_1k={step_ratio:.2f} "
          f"control_max_tokens_over_completion={worst_control:.2f} "
          f"floor_max_tokens_over_completion={worst_floor:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
