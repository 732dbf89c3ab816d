"""RL-run log fixtures written the way the trainers write them (never copied from a run): TRL 1.16's
``GRPOTrainer.log`` table to ``completions/completions_NNNNN.parquet``, and verl's ``_dump_generations``
lines to ``<rollout_data_dir>/<step>.jsonl``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

SYSTEM = "Think step by step, then give the answer."
PROBLEMS = [("What is 2 + 3?", "5"), ("What is 4 * 2?", "8")]


def completion(question: str, answer: str, right: bool) -> str:
    said = answer if right else str(int(answer) + 1)
    return f"We compute {question[8:-1]}.\nThat gives {said}.\nThe answer is {said}."


def trl_run(
    output_dir: Path, steps: tuple[int, ...] = (1, 2), chat: bool = True, generations: int = 3, solution: bool = True
) -> Path:
    """A GRPO output_dir with ``log_completions=True``: per step, each problem's ``generations`` completions
    (the first right, the others wrong at step 1; all right from step 2), rewards of two functions, TRL's
    group-normalised advantage, and a ``log_extra`` column (``solution``: the gold answer; without it the run
    has outcomes but no reference answer)."""
    (output_dir / "completions").mkdir(parents=True, exist_ok=True)
    for step in steps:
        prompts, completions, accuracy, formats, extra, advantages = [], [], [], [], [], []
        for question, answer in PROBLEMS:
            rights = [True] + [step > 1] * (generations - 1)
            rewards = [float(r) for r in rights]
            mean = sum(rewards) / len(rewards)
            std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (len(rewards) - 1))
            for right, reward in zip(rights, rewards, strict=True):
                text = completion(question, answer, right)
                if chat:
                    prompts.append([{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}])
                    completions.append([{"role": "assistant", "content": text}])
                else:
                    prompts.append(question)
                    completions.append(text)
                accuracy.append(reward)
                formats.append(float("nan") if not right else 1.0)  # a reward function that returned None
                extra.append(answer)
                advantages.append((reward - mean) / (std + 1e-4))
        table = {  # GRPOTrainer.log: step, prompt, completion, rewards..., extras..., advantage
            "step": [step] * len(prompts),
            "prompt": prompts,
            "completion": completions,
            "accuracy_reward": accuracy,
            "format_reward": formats,
            **({"solution": extra} if solution else {}),
            "advantage": advantages,
        }
        pd.DataFrame(table).to_parquet(output_dir / "completions" / f"completions_{step:05d}.parquet")
    return output_dir


def verl_run(rollout_dir: Path, steps: tuple[int, ...] = (1, 2), generations: int = 2) -> Path:
    """A verl ``rollout_data_dir``: per step, each problem's responses with the chat template decoded without its
    special tokens (what ``batch_decode(..., skip_special_tokens=True)`` leaves), the score, ``gts`` and the
    reward extra info ``acc``."""
    rollout_dir.mkdir(parents=True, exist_ok=True)
    for step in steps:
        lines = []
        for question, answer in PROBLEMS:
            prompt = f"system\n{SYSTEM}\nuser\n{question}\nassistant\n"
            for index in range(generations):
                right = index == 0 or step > 1
                entry = {
                    "input": prompt,
                    "output": completion(question, answer, right),
                    "gts": answer,
                    "score": 1.0 if right else 0.0,
                    "step": step,
                    "acc": right,
                }
                lines.append(json.dumps(entry, ensure_ascii=False))
        (rollout_dir / f"{step}.jsonl").write_text("\n".join(lines) + "\n")
    return rollout_dir
