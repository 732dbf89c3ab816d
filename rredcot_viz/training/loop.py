"""The trainer: sampling, credit, the update, evaluation, checkpoints and logging, once for every method.

Every random choice of step s derives from (seed, s, a key naming the choice): which problems are drawn,
every rollout's seed, RRPO's reset step, the localiser's seed. With the trainable weights and the optimiser
restored from a checkpoint, a resumed run therefore continues exactly as the uninterrupted one would have.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rredcot_viz.errors import ConfigError
from rredcot_viz.model.lm import LanguageModel, PrefixSampling
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.training.config import TrainConfig
from rredcot_viz.training.credit import group_sigmas, segment_rollout
from rredcot_viz.training.loss import policy_loss
from rredcot_viz.training.methods import methods
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import Problem, reward

StepCallback = Callable[[int, dict[str, Any], list[Group]], None]


def derived_seed(*parts: object) -> int:
    return int(hashlib.sha256(repr(parts).encode()).hexdigest()[:8], 16)


def problem_prompt(lm: LanguageModel, problem: Problem) -> str:
    """The chat-formatted prompt the trainer samples a problem's rollouts from."""
    return lm.format_prompt(
        problem.prompt or problem.question,
        system=problem.system or "Solve the problem step by step, then state the answer as 'The answer is N.'",
    )


class Trainer:
    def __init__(
        self,
        base: LanguageModel,
        config: TrainConfig,
        train: list[Problem],
        held_out: list[Problem],
        run_id: str = "run",
        on_step: StepCallback | None = None,
    ):
        if not train:
            raise ConfigError("the trainer needs at least one training problem")
        self.config = config
        self.method = methods.get(config.method)()
        self.train_problems, self.held_out = train, held_out
        self.run_id = run_id
        self.on_step = on_step
        self.step = 0
        self.base = base
        torch.manual_seed(config.seed)
        model = copy.deepcopy(base.model)  # the base model stays untouched (the app may share it)
        if config.full_finetune:
            for parameter in model.parameters():
                parameter.requires_grad_(True)
            self.reference = base.model if config.kl_beta > 0 else None
        else:
            from peft import LoraConfig, get_peft_model

            targets = [t for t in config.lora_targets if any(name.endswith(t) for name, _ in model.named_modules())]
            if not targets:
                raise ConfigError(f"none of the LoRA targets {config.lora_targets} exist in this model")
            lora = LoraConfig(
                r=config.lora_rank,
                lora_alpha=config.lora_alpha,
                target_modules=targets,
                lora_dropout=0.0,
                bias="none",
                task_type="CAUSAL_LM",
            )
            model = get_peft_model(model, lora)
            self.reference = None
        self.model = model
        self.trainable = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(self.trainable, lr=config.learning_rate, weight_decay=config.weight_decay)
        self.policy = LanguageModel(
            model,
            base.tokenizer,
            name=f"{base.name} + {config.method}",
            fingerprint=f"{base.fingerprint}:{run_id}:0",
            device=base.device,
            dtype=base.dtype,
        )
        self._prompts: dict[int, list[int]] = {}

    # ------------------------------------------------------------------ sampling
    def rng(self, *key: object) -> np.random.Generator:
        return np.random.default_rng(derived_seed(self.config.seed, self.step, *key))

    def sampling(self, temperature: float | None = None, max_new_tokens: int | None = None) -> SamplingConfig:
        return SamplingConfig(
            temperature=self.config.temperature if temperature is None else temperature,
            top_p=self.config.top_p,
            max_new_tokens=max_new_tokens or self.config.max_new_tokens,
            stop_on_answer=True,
            batch_size=16,
        )

    def prompt_text(self, problem: Problem) -> str:
        return problem_prompt(self.policy, problem)

    def prompt_ids(self, problem: Problem) -> list[int]:
        key = id(problem)
        if key not in self._prompts:
            self._prompts[key] = self.policy.encode_prompt(self.prompt_text(problem))
        return self._prompts[key]

    def sample(
        self,
        problem: Problem,
        prefix: list[int],
        n: int,
        key: tuple,
        temperature: float | None = None,
        prefix_entropies: list[float] | None = None,
    ) -> list[TrainRollout]:
        """``n`` rollouts after the prompt and ``prefix`` (completion tokens of a reset), seeded by key;
        ``prefix_entropies`` (the parent's, for a reset) complete the per-token entropies the segmenter reads."""
        if n <= 0:
            return []
        prompt = self.prompt_ids(problem)
        ids = prompt + list(prefix)
        seeds = tuple(derived_seed(self.config.seed, self.step, *key, i) for i in range(n))
        self.model.eval()
        (generations,) = self.policy.sample_after_prefixes(
            ids, [PrefixSampling(len(ids), (), seeds)], self.sampling(temperature)
        )
        rollouts = []
        for generation in generations:
            completion = list(prefix) + generation.token_ids
            text = self.policy.decode(completion)
            rollout = TrainRollout(
                prompt,
                completion,
                text,
                reward(text, problem.answer),
                generation.seed,
                suffix_start=len(prefix),
                info={
                    "finish_reason": generation.finish_reason,
                    "suffix_char": len(self.policy.decode(list(prefix))),
                    "entropies": list(prefix_entropies or [0.0] * len(prefix))[: len(prefix)]
                    + list(generation.entropies),
                },
            )
            self.segment(rollout)
            rollouts.append(rollout)
        return rollouts

    def segment(self, rollout: TrainRollout) -> list[int]:
        return segment_rollout(self.policy, rollout, self.config)

    # ------------------------------------------------------------------ credit
    def redistribute_group(self, problem_index: int, rollouts: list[TrainRollout]) -> list[np.ndarray]:
        problem = self.train_problems[problem_index]
        return group_sigmas(self.policy, self.config, problem, self.prompt_ids(problem), rollouts)

    # ------------------------------------------------------------------ one step
    def train_step(self) -> tuple[dict[str, Any], list[Group]]:
        config = self.config
        started = time.perf_counter()
        meter_before = self.policy.meter.total
        self.policy.fingerprint = f"{self.base.fingerprint}:{self.run_id}:{self.step}"  # the weights changed
        chosen = self.rng("problems").choice(
            len(self.train_problems),
            config.prompts_per_step,
            replace=len(self.train_problems) < config.prompts_per_step,
        )
        groups = [g for index in chosen for g in self.method.collect(self, self.train_problems[int(index)], int(index))]
        collected = time.perf_counter()
        self.method.advantages(self, groups)
        credited = time.perf_counter()
        rollouts = [r for g in groups for r in g.rollouts]
        update = self.update(rollouts)
        finished = time.perf_counter()
        rewards = np.array([r.reward for r in rollouts])
        advantages = np.concatenate([r.token_advantages[r.suffix_start :] for r in rollouts if len(r.completion_ids)])
        zero_groups = [np.std([r.reward for r in g.rollouts]) < 1e-8 for g in groups]
        cost = self.policy.meter.total - meter_before
        metrics = {
            "step": self.step + 1,
            "reward_mean": float(rewards.mean()),
            "reward_std": float(rewards.std()),
            "advantage_mean": float(advantages.mean()) if len(advantages) else 0.0,
            "advantage_std": float(advantages.std()) if len(advantages) else 0.0,
            "advantage_abs_mean": float(np.abs(advantages).mean()) if len(advantages) else 0.0,
            "zero_variance_groups": float(np.mean(zero_groups)),
            "rollouts": len(rollouts),
            "tokens_generated": cost.tokens_generated,
            "tokens_trained": update["tokens"],
            "seconds": finished - started,
            "seconds_rollouts": collected - started,
            "seconds_credit": credited - collected,
            "seconds_update": finished - credited,
            **{k: v for k, v in update.items() if k != "tokens"},
        }
        self.step += 1
        return metrics, groups

    def batch_logprobs(self, rollouts: list[TrainRollout], model: Any = None) -> tuple[torch.Tensor, ...]:
        """Log-probs (B, T) of each rollout's completion tokens, the trained-token mask, and entropies.

        Rollouts that share a prompt (a group) run the prompt once and continue every completion from its
        KV cache: the same computation as one full sequence per row (gradients flow into the shared prompt
        pass from every row), with the prompt's tokens processed once instead of once per rollout."""
        model = model or self.model
        causal_lm = model.get_base_model() if hasattr(model, "get_base_model") else model
        decoder, head = causal_lm.get_decoder(), causal_lm.get_output_embeddings()
        device = self.policy.device
        width = max(len(r.completion_ids) for r in rollouts)
        logprobs = torch.zeros(len(rollouts), width, device=device)
        entropy = torch.zeros(len(rollouts), width, device=device)
        mask = torch.zeros(len(rollouts), width, device=device)
        by_prompt: dict[tuple[int, ...], list[int]] = {}
        for row, r in enumerate(rollouts):
            if r.completion_ids:
                by_prompt.setdefault(tuple(r.prompt_ids), []).append(row)
        for prompt, rows in by_prompt.items():
            hidden = _shared_prompt_hidden(
                decoder, list(prompt), [rollouts[row].completion_ids for row in rows], device
            )
            for slot, row in enumerate(rows):
                r = rollouts[row]
                n = len(r.completion_ids)
                scores = torch.log_softmax(head(hidden[slot, :n]).float(), dim=-1)
                targets = torch.tensor(r.completion_ids, device=device)
                logprobs[row, :n] = scores.gather(-1, targets[:, None])[:, 0]
                entropy[row, :n] = -(scores.exp() * scores).sum(-1).detach()
                mask[row, r.suffix_start : n] = 1.0
        return logprobs, mask, entropy

    def update(self, rollouts: list[TrainRollout]) -> dict[str, float]:
        config = self.config
        trained = [r for r in rollouts if len(r.completion_ids) > r.suffix_start]
        if not trained:
            return {"loss": 0.0, "grad_norm": 0.0, "entropy": 0.0, "tokens": 0, "clip_fraction": 0.0}
        self.model.train()
        width = max(len(r.completion_ids) for r in trained)
        advantages = torch.zeros(len(trained), width)
        for row, r in enumerate(trained):
            advantages[row, : len(r.completion_ids)] = torch.tensor(r.token_advantages, dtype=torch.float32)
        logprobs, mask, entropy = self.batch_logprobs(trained)
        reference = None
        if config.kl_beta > 0:
            with torch.no_grad():
                if self.reference is not None:
                    reference = self.batch_logprobs(trained, self.reference)[0]
                else:
                    with self.model.disable_adapter():
                        reference = self.batch_logprobs(trained)[0]
        loss, stats = policy_loss(
            logprobs,
            logprobs.detach(),
            advantages.to(logprobs.device),
            mask,
            config.loss,
            config.clip_eps,
            reference,
            config.kl_beta,
        )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.trainable, config.grad_clip)
        self.optimizer.step()
        self.model.eval()
        tokens = float(mask.sum())
        return {
            "loss": float(loss.detach()),
            "grad_norm": float(grad_norm),
            "entropy": float((entropy * mask).sum() / max(tokens, 1.0)),
            "tokens": int(tokens),
            **stats,
        }

    # ------------------------------------------------------------------ evaluation and the run
    def evaluate(self) -> float:
        """Held-out accuracy: ``eval_samples`` sampled answers per held-out problem, all in one batched call,
        with seeds that do not depend on the step (a paired comparison across steps and runs)."""
        if not self.held_out:
            return float("nan")
        pairs = [(i, j) for i in range(len(self.held_out)) for j in range(self.config.eval_samples)]
        prompts = [self.prompt_ids(self.held_out[i]) for i, _ in pairs]
        seeds = [derived_seed(self.config.seed, "eval", i, j) for i, j in pairs]
        self.model.eval()
        config = replace(self.sampling(), batch_size=64)  # one batch shares the few-shot prefix and its tails
        generations = self.policy.sample(prompts, seeds, config).generations
        rewards = [reward(g.text, self.held_out[i].answer) for (i, _), g in zip(pairs, generations, strict=True)]
        return float(np.mean(rewards))

    def run(
        self,
        progress: Callable[[int, int], None] | None = None,
        checkpoint_dir: Path | None = None,
        log: Callable[[dict[str, Any], list[Group]], None] | None = None,
        start_accuracy: float | None = None,
    ) -> list[dict[str, Any]]:
        """Train until ``config.steps`` (from the current step), evaluating, checkpointing and logging.
        ``start_accuracy``: the step-0 held-out accuracy when already known (the same start model and seeds)."""
        history = []
        if self.step == 0 and self.config.eval_every:
            accuracy = self.evaluate() if start_accuracy is None else start_accuracy
            metrics = {"step": 0, "held_out_accuracy": accuracy}
            history.append(metrics)
            if log:
                log(metrics, [])
        while self.step < self.config.steps:
            metrics, groups = self.train_step()
            if self.config.eval_every and (self.step % self.config.eval_every == 0 or self.step == self.config.steps):
                metrics["held_out_accuracy"] = self.evaluate()
            history.append(metrics)
            if log:
                keep = self.config.keep_rollouts_every and self.step % self.config.keep_rollouts_every == 0
                log(metrics, groups if keep else [])
            if checkpoint_dir and self.config.checkpoint_every and self.step % self.config.checkpoint_every == 0:
                self.save(checkpoint_dir / f"step_{self.step:04d}")
            if progress:
                progress(self.step, self.config.steps)
        return history

    # ------------------------------------------------------------------ checkpoints
    def save(self, path: Path) -> Path:
        """Write the checkpoint beside ``path`` and rename it into place, so a process killed mid-save leaves
        the previous checkpoint as the latest whole one."""
        partial = path.with_name(path.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        weights = {name: p.detach().cpu() for name, p in self.model.named_parameters() if p.requires_grad}
        torch.save({"weights": weights, "optimizer": self.optimizer.state_dict()}, partial / "state.pt")
        (partial / "trainer.json").write_text(
            json.dumps(
                {"step": self.step, "run_id": self.run_id, "config": asdict(self.config)}, indent=1, default=list
            )
        )
        shutil.rmtree(path, ignore_errors=True)
        partial.rename(path)
        return path

    def load(self, path: Path) -> None:
        meta = json.loads((path / "trainer.json").read_text())
        state = torch.load(path / "state.pt", weights_only=True)
        parameters = dict(self.model.named_parameters())
        with torch.no_grad():
            for name, value in state["weights"].items():
                parameters[name].copy_(value)
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(meta["step"])


def _shared_prompt_hidden(
    decoder: Any, prompt: list[int], completions: list[list[int]], device: torch.device | str
) -> torch.Tensor:
    """Hidden states (N, T, H) that predict each completion's tokens (row j at index t predicts token t):
    the prompt's last position, then every completion position but the last. The prompt runs once."""
    shared = decoder(input_ids=torch.tensor([prompt], device=device), use_cache=True)
    cache = shared.cache
    cache.batch_repeat_interleave(len(completions))
    width = max(len(c) for c in completions)
    ids = torch.zeros(len(completions), width, dtype=torch.long, device=device)
    attention = torch.zeros(len(completions), len(prompt) + width, dtype=torch.long, device=device)
    attention[:, : len(prompt)] = 1
    for row, completion in enumerate(completions):
        ids[row, : len(completion)] = torch.tensor(completion, device=device)
        attention[row, len(prompt) : len(prompt) + len(completion)] = 1
    positions = torch.arange(len(prompt), len(prompt) + width, device=device)[None].expand(len(completions), -1)
    rest = decoder(
        input_ids=ids, attention_mask=attention, position_ids=positions, past_key_values=cache
    ).last_hidden_state
    first = shared.last_hidden_state[:, -1:].expand(len(completions), -1, -1)
    return torch.cat([first, rest[:, :-1]], dim=1)


def latest_checkpoint(directory: Path) -> Path | None:
    checkpoints = sorted(p for p in directory.glob("step_*") if p.suffix != ".partial") if directory.is_dir() else []
    return checkpoints[-1] if checkpoints else None
