"""RREDCoT-GRPO inside TRL: a ``trl.GRPOTrainer`` whose loss sees per-token advantages from the redistributed
reward instead of one advantage per sequence, so TRL's own multi-GPU / DeepSpeed / vLLM setups run it.

TRL generates, computes rewards with its reward functions and builds the batch as usual; this subclass then
segments each completion, scores its states with the current policy (one call per prompt group, the prompt
and each completion encoded once: ``training.credit``, as in the built-in trainer), gathers the sigmas of every
process (a group may span processes), couples them to advantages per group with the settings of one
``CreditConfig`` and hands TRL a (B, T) tensor, which its loss supports for subclasses.

What it keeps of TRL's settings: ``scale_rewards`` ("group": TRL's unbiased std + 1e-4; "batch"; "none"), so a
flat estimator gives TRL's own advantages exactly; rows every reward function declined (None) are left out of
their group's statistics and get 0, as in TRL; eval groups have ``num_generations_eval`` rows; every
``loss_type`` takes the (B, T) advantages. ``multi_objective_aggregation="normalize_then_sum"`` is refused:
it turns rewards into z-scores, while RREDCoT's terminal value must be the reward on its values' scale.
The hybrid segmenter reads the entropies of the credit call's own pass over prompt + completion (no extra
forward pass), so a completion is cut as the analyzer cuts the same text.

Dataset rows need the reference answer (column ``answer``) and, for v-hat, a reference solution (column
``solution``; without it a prompt is credited by R-hat alone, ``answer_only``, and logged so). The advantages
the loss trains with are what TRL's completions table shows (``advantage``: each completion's token mean, with
``segment_advantages`` and ``credit_estimator`` columns beside it); ``credit_groups_<estimator>`` counts the
prompts each estimator credited. Optionally logs every generation batch's rollouts and advantages to the
DuckDB store, in the records the Train page's step inspector reads.

    trainer = RREDCoTGRPOTrainer(model, reward_funcs=[my_reward], args=GRPOConfig(...), train_dataset=data,
                                 credit=CreditConfig(k=4))
    trainer.train()

Pinned to trl 1.16 (``trl>=1.16,<1.17``): it overrides TRL's private ``_generate_and_score_completions`` and
``_calculate_rewards`` and writes its private ``_logs`` / ``_metrics``, which change between minor versions.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from accelerate.utils import gather_object
from trl import GRPOConfig, GRPOTrainer

from rredcot_viz.errors import ConfigError
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.training.config import CreditConfig
from rredcot_viz.training.credit import (
    CreditedRow,
    advantages_from_sigmas,
    credit_estimator,
    estimator_counts,
    group_sigmas,
)
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.task import Problem

if TYPE_CHECKING:
    from rredcot_viz.store import Store

SCALE_REWARDS = ("group", "batch", "none")


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, list):  # conversational: the last user turn is the question
        users = [m.get("content", "") for m in prompt if m.get("role") == "user"]
        return str(users[-1] if users else prompt)
    return str(prompt)


def _datasets(dataset: Any) -> dict[str, Any]:
    if dataset is None:
        return {}
    if isinstance(dataset, dict):
        return {f"eval_dataset[{name!r}]": d for name, d in dataset.items()}
    return {"": dataset}


def check_columns(datasets: dict[str, Any], answer_column: str) -> None:
    """Refuse, before training starts, a dataset whose rows lack the reference answer (a streamed dataset that
    does not list its columns is checked row by row instead)."""
    for name, dataset in datasets.items():
        columns = getattr(dataset, "column_names", None)
        if columns is not None and answer_column not in columns:
            raise ConfigError(
                f"the {name} has no {answer_column!r} column, which RREDCoT credit needs (the reference answer its "
                f"values read); its columns: {', '.join(columns)}. Add it, or name yours with answer_column="
            )


class RREDCoTGRPOTrainer(GRPOTrainer):
    def __init__(
        self,
        *args: Any,
        credit: CreditConfig | None = None,
        store: Store | None = None,
        run_id: str | None = None,
        answer_column: str = "answer",
        solution_column: str = "solution",
        **kwargs: Any,
    ):
        if credit is not None and not isinstance(credit, CreditConfig):
            raise ConfigError(
                f"credit= takes a CreditConfig (segmenter, K, estimator, coupling...), got {type(credit).__name__}; "
                "a built-in run's config holds one as .credit"
            )
        given = inspect.signature(GRPOTrainer.__init__).bind_partial(None, *args, **kwargs).arguments
        trl_args = given.get("args") or GRPOConfig(output_dir="trl-rredcot")
        if trl_args.multi_objective_aggregation == "normalize_then_sum":
            raise ConfigError(
                "multi_objective_aggregation='normalize_then_sum' turns each reward into a z-score, but RREDCoT's "
                "terminal value is the reward itself, on the scale of its state values (the probability of the "
                "reference answer); use 'sum_then_normalize' (TRL's default) with rewards in [0, 1]"
            )
        if trl_args.scale_rewards not in SCALE_REWARDS:
            raise ConfigError(
                f"scale_rewards must be one of {', '.join(SCALE_REWARDS)}, got {trl_args.scale_rewards!r}"
            )
        datasets = {"train_dataset": given.get("train_dataset")} | {
            (name or "eval_dataset"): d for name, d in _datasets(given.get("eval_dataset")).items()
        }
        check_columns({name: d for name, d in datasets.items() if d is not None}, answer_column)
        super().__init__(*args, **kwargs)
        self.credit = credit or CreditConfig()
        self.answer_column, self.solution_column = answer_column, solution_column
        self.store, self.run_id = store, run_id or "trl-rredcot"
        self._global_rewards: torch.Tensor | None = None
        self.last_rollouts: list[TrainRollout] = []  # this process's rollouts of the last generation batch
        if store is not None and self.accelerator.is_main_process:
            settings = {
                "method": "rredcot-trl",
                "steps": self.args.max_steps,
                "credit": asdict(self.credit),
                "trl": {name: getattr(self.args, name) for name in ("loss_type", "scale_rewards", "num_generations")},
            }
            model = self.accelerator.unwrap_model(self.model)
            store.put_run(self.run_id, "train", {"name": model.config.name_or_path, "fingerprint": ""}, settings, 0)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        weights = self.reward_weights.to(rewards_per_func.device).unsqueeze(0)
        rewards = (rewards_per_func * weights).nansum(dim=1)
        rewards[torch.isnan(rewards_per_func).all(dim=1)] = torch.nan  # TRL's unscorable rows: no reward at all
        self._global_rewards = rewards  # every process's rows
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

    def _problem(self, row: dict[str, Any]) -> Problem:
        if self.answer_column not in row:
            raise ConfigError(
                f"a dataset row has no {self.answer_column!r} column, which RREDCoT credit needs (the reference "
                f"answer); its columns: {', '.join(row)}. Add it, or name yours with answer_column="
            )
        return Problem(_prompt_text(row["prompt"]), str(row[self.answer_column]), row.get(self.solution_column) or None)

    def _reward_scale(self, rewards: np.ndarray) -> tuple[str, float | None]:
        """What advantages divide by, as TRL's ``scale_rewards``: (std mode, fixed scale or None)."""
        if self.scale_rewards == "none":
            return "trl", 1.0
        if self.scale_rewards == "batch":
            finite = rewards[np.isfinite(rewards)]
            return "trl", (float(finite.std(ddof=1)) if len(finite) > 1 else 0.0) + 1e-4
        return "trl", None  # "group": each group's unbiased std + 1e-4

    def rredcot_advantages(self, inputs: list[dict[str, Any]], output: dict[str, Any]) -> torch.Tensor:
        """(B, T) token advantages of this process's completions from RREDCoT credit over each prompt group."""
        mode = "train" if self.model.training else "eval"
        group_size = self.num_generations if mode == "train" else self.num_generations_eval
        rows, width = output["completion_ids"].shape
        start = self.accelerator.process_index * rows
        all_rewards = self._global_rewards.float().cpu().numpy()
        policy = self._policy()
        rollouts = []
        for i in range(rows):
            prompt = output["prompt_ids"][i][output["prompt_mask"][i].bool()].tolist()
            completion = output["completion_ids"][i][output["completion_mask"][i].bool()].tolist()
            text = policy.decode(completion)
            rollouts.append(TrainRollout(prompt, completion, text, float(all_rewards[start + i]), seed=0))
        was_training = policy.model.training
        policy.model.eval()
        try:
            local_groups: dict[int, list[int]] = {}
            for i in range(rows):
                local_groups.setdefault((start + i) // group_size, []).append(i)
            sigmas: dict[int, np.ndarray] = {}
            for members in local_groups.values():
                problem = self._problem(inputs[members[0]])
                group = [rollouts[i] for i in members]
                estimator = credit_estimator(self.credit, problem)
                found = group_sigmas(policy, self.credit, estimator, group[0].prompt_ids, group, problem)
                sigmas.update(zip(members, found, strict=True))
        finally:
            policy.model.train(was_training)
        mine = [
            (
                CreditedRow(start + i, tuple(sigmas[i].tolist()), tuple(map(tuple, rollouts[i].segments)),
                            rollouts[i].reward, len(rollouts[i].completion_ids)),
                rollouts[i].info["credit_estimator"],
            )
            for i in range(rows)
        ]  # fmt: skip
        shared = gather_object(mine)  # every process's rows: a group may span processes
        estimator_of = {row.index: name for row, name in shared}
        std, scale = self._reward_scale(all_rewards)
        credited = advantages_from_sigmas([row for row, _ in shared], group_size, self.credit, std=std, scale=scale)
        advantages = torch.zeros(rows, width, device=output["completion_ids"].device)
        summary: list[tuple[float, str, str]] = []  # per row of every process: token mean, segments, estimator
        for index in sorted(credited):
            done = credited[index]
            segments = " / ".join(f"{a:+.2f}" for a in done.segments)
            summary.append((float(done.tokens.mean()) if len(done.tokens) else 0.0, segments, estimator_of[index]))
            local = index - start
            if 0 <= local < rows:
                rollouts[local].segment_advantages = done.segments
                rollouts[local].token_advantages = done.tokens
                advantages[local, : len(done.tokens)] = torch.as_tensor(done.tokens, dtype=advantages.dtype)
        by_group: dict[int, list[str]] = {}
        for index in sorted(estimator_of):
            by_group.setdefault(index // group_size, []).append(estimator_of[index])
        self._log_trained_advantages(mode, summary, list(by_group.values()))
        self.last_rollouts = rollouts
        if self.store is not None and self.accelerator.is_main_process and mode == "train":
            self._store(inputs, rollouts, advantages, output["completion_mask"], group_size)
        return advantages

    def _log_trained_advantages(
        self, mode: str, summary: list[tuple[float, str, str]], estimators: list[list[str]]
    ) -> None:
        """Put the advantages the loss trains with where TRL logs advantages (its completions table, replacing
        the GRPO advantages it has just logged for the same rows), and count the estimators per prompt."""
        logged = self._logs["advantages"]
        for _ in range(min(len(summary), len(logged))):
            logged.pop()
        logged.extend(mean for mean, _, _ in summary)
        self._logs["extra"]["segment_advantages"].extend(segments for _, segments, _ in summary)
        self._logs["extra"]["credit_estimator"].extend(name for _, _, name in summary)
        for key, count in estimator_counts([names[0] for names in estimators], self.credit).items():
            self._metrics[mode][key].append(float(count))

    def _store(self, inputs, rollouts: list[TrainRollout], advantages: torch.Tensor, mask: torch.Tensor,
               group_size: int) -> None:  # fmt: skip
        step = self.state.global_step + 1
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
        rewards = [r.reward for r in rollouts if np.isfinite(r.reward)]
        used = [rollouts[i].info.get("credit_estimator") for i in range(0, len(rollouts), group_size)]
        self.store.put_train_metrics(
            self.run_id,
            step,
            {
                "step": step,
                "reward_mean": float(np.mean(rewards)) if rewards else float("nan"),
                "reward_std": float(np.std(rewards)) if rewards else float("nan"),
                "advantage_abs_mean": float(trained.abs().mean()) if trained.numel() else 0.0,
                "advantage_std": float(trained.std()) if trained.numel() > 1 else 0.0,
                **estimator_counts(used, self.credit),
            },
        )
