"""RREDCoT-GRPO inside TRL: a ``trl.GRPOTrainer`` whose loss sees per-token advantages from the redistributed
reward instead of one advantage per sequence, so TRL's own multi-GPU / DeepSpeed / vLLM setups run it.

TRL computes rewards with its reward functions and builds the batch as usual; this subclass then segments
each completion, scores its states with the current policy (one packed call per prompt group, exactly as
the built-in trainer does: ``training.credit``), gathers the sigmas of every process (a group may span
processes), couples them to advantages per group (mode a / b / c and lambda, METHOD.md §5), and hands TRL a
(B, T) tensor, which its loss supports for subclasses. Dataset rows need the reference answer (column
``answer``) and, for v-hat, a reference solution (column ``solution``; without it R-hat alone is used).
Optionally logs every generation batch's rollouts and advantages to the DuckDB store, in the records the
Train page's step inspector reads.

    trainer = RREDCoTGRPOTrainer(model, reward_funcs=[my_reward], args=GRPOConfig(...), train_dataset=data,
                                 credit=RREDCoTGRPOConfig(coupling="a", segments=4))
    trainer.train()
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import torch
from accelerate.utils import gather_object
from trl import GRPOTrainer

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.training.credit import couple_group, credit_estimator, group_sigmas
from rredcot_viz.training.methods.rredcot import RREDCoTGRPOConfig
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.task import Problem


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, list):  # conversational: the last user turn is the question
        users = [m.get("content", "") for m in prompt if m.get("role") == "user"]
        return str(users[-1] if users else prompt)
    return str(prompt)


class RREDCoTGRPOTrainer(GRPOTrainer):
    def __init__(
        self,
        *args: Any,
        credit: RREDCoTGRPOConfig | None = None,
        store: Any | None = None,
        run_id: str | None = None,
        answer_column: str = "answer",
        solution_column: str = "solution",
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.credit = credit or RREDCoTGRPOConfig()
        self.answer_column, self.solution_column = answer_column, solution_column
        self.store, self.run_id = store, run_id or "trl-rredcot"
        self._global_rewards: torch.Tensor | None = None
        self.last_rollouts: list[TrainRollout] = []  # this process's rollouts of the last generation batch
        if store is not None and self.accelerator.is_main_process:
            settings = {**asdict(self.credit), "method": "rredcot-trl", "steps": self.args.max_steps}
            model = self.accelerator.unwrap_model(self.model)
            store.put_run(self.run_id, "train", {"name": model.config.name_or_path, "fingerprint": ""}, settings, 0)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        weights = self.reward_weights.to(rewards_per_func.device).unsqueeze(0)
        self._global_rewards = torch.nan_to_num((rewards_per_func * weights).nansum(dim=1))  # every process's rows
        return rewards_per_func

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        output = super()._generate_and_score_completions(inputs)
        output["advantages"] = self.rredcot_advantages(inputs, output)
        return output

    def _policy(self) -> LanguageModel:
        model = self.accelerator.unwrap_model(self.model)
        return LanguageModel(
            model, self.processing_class, name="trl-policy", fingerprint=f"trl:{self.run_id}:{self.state.global_step}"
        )

    def rredcot_advantages(self, inputs: list[dict[str, Any]], output: dict[str, Any]) -> torch.Tensor:
        """(B, T) token advantages of this process's completions from RREDCoT credit over each prompt group."""
        rows, width = output["completion_ids"].shape
        start = self.accelerator.process_index * rows
        rewards = self._global_rewards[start : start + rows].tolist()
        policy = self._policy()
        rollouts = []
        for i in range(rows):
            prompt = output["prompt_ids"][i][output["prompt_mask"][i].bool()].tolist()
            completion = output["completion_ids"][i][output["completion_mask"][i].bool()].tolist()
            text = policy.decode(completion)
            rollouts.append(TrainRollout(prompt, completion, text, float(rewards[i]), seed=0))
        group_size = self.num_generations
        was_training = policy.model.training
        policy.model.eval()
        try:
            local_groups: dict[int, list[int]] = {}
            for i in range(rows):
                local_groups.setdefault((start + i) // group_size, []).append(i)
            sigmas: dict[int, np.ndarray] = {}
            for members in local_groups.values():
                row = inputs[members[0]]
                problem = Problem(
                    _prompt_text(row["prompt"]), str(row[self.answer_column]), row.get(self.solution_column) or None
                )
                group = [rollouts[i] for i in members]
                estimator = credit_estimator(self.credit.estimator, self.credit.estimator_options, problem)
                found = group_sigmas(policy, self.credit, estimator, group[0].prompt_ids, group, problem)
                sigmas.update(zip(members, found, strict=True))
        finally:
            policy.model.train(was_training)
        shared = gather_object([(start + i, sigmas[i].tolist(), rollouts[i].segments, rollouts[i].reward,
                                 len(rollouts[i].completion_ids)) for i in range(rows)])  # fmt: skip
        by_group: dict[int, list[tuple]] = {}
        for entry in sorted(shared, key=lambda e: e[0]):
            by_group.setdefault(entry[0] // group_size, []).append(entry)
        advantages = torch.zeros(rows, width, device=output["completion_ids"].device)
        for entries in by_group.values():
            stand_ins = [TrainRollout([], [0] * n, "", reward, 0, segments=list(map(tuple, segs)))
                         for _, _, segs, reward, n in entries]  # fmt: skip
            c = self.credit
            couple_group(stand_ins, [np.array(e[1]) for e in entries], c.coupling, c.coupling_lambda, c.gae_lambda)
            for (index, *_), stand_in in zip(entries, stand_ins, strict=True):
                local = index - start
                if 0 <= local < rows:
                    rollouts[local].segment_advantages = stand_in.segment_advantages
                    rollouts[local].token_advantages = stand_in.token_advantages
                    length = len(stand_in.token_advantages)
                    advantages[local, :length] = torch.as_tensor(stand_in.token_advantages, dtype=advantages.dtype)
        self.last_rollouts = rollouts
        if self.store is not None and self.accelerator.is_main_process:
            self._log(inputs, rollouts, advantages, output["completion_mask"])
        return advantages

    def _log(self, inputs, rollouts: list[TrainRollout], advantages: torch.Tensor, mask: torch.Tensor) -> None:
        step = self.state.global_step + 1
        group_size = self.num_generations
        records = [
            {
                **r.record("base"),
                "problem": i // group_size,
                "question": _prompt_text(inputs[i]["prompt"]),
                "parent": None,
            }
            for i, r in enumerate(rollouts)
        ]
        self.store.put_train_rollouts(self.run_id, step, records)
        trained = advantages[mask.bool()]
        self.store.put_train_metrics(
            self.run_id,
            step,
            {
                "step": step,
                "reward_mean": float(np.mean([r.reward for r in rollouts])),
                "reward_std": float(np.std([r.reward for r in rollouts])),
                "advantage_abs_mean": float(trained.abs().mean()) if trained.numel() else 0.0,
                "advantage_std": float(trained.std()) if trained.numel() > 1 else 0.0,
            },
        )
