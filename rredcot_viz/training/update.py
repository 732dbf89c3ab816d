"""``Learner``: the trained weights (LoRA adapters, or every weight of a tiny model), their optimiser, and one
policy-gradient update from rollouts with per-token advantages under a method's loss. On an 8-bit or 4-bit
base the adapters train on frozen quantised weights (QLoRA, for 4-bit)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from rredcot_viz.errors import ConfigError
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.quantization import differentiable
from rredcot_viz.training.config import TrainConfig
from rredcot_viz.training.rollouts import TrainRollout

LossFn = Callable[..., tuple[torch.Tensor, dict[str, float]]]


class Learner:
    def __init__(self, base: LanguageModel, config: TrainConfig):
        self.config = config
        self.device = base.device
        torch.manual_seed(config.seed)
        model = copy.deepcopy(base.model)  # the base model stays untouched (the app may share it)
        if base.quantization != "none":
            if config.full_finetune:
                raise ConfigError(
                    f"full_finetune trains every weight, and a {base.quantization} model's weights are frozen "
                    "integers: train LoRA adapters on it (QLoRA, the default) or load the model in full precision"
                )
            if base.quantization.startswith("4bit"):
                differentiable(model)
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

    def logprobs(self, rollouts: list[TrainRollout], model: Any = None) -> tuple[torch.Tensor, ...]:
        """Log-probs (B, T) of each rollout's completion tokens, the trained-token mask, and entropies.

        Rollouts that share a prompt (a group) run the prompt once and continue every completion from its
        KV cache: the same computation as one full sequence per row (gradients flow into the shared prompt
        pass from every row), with the prompt's tokens processed once instead of once per rollout."""
        model = model or self.model
        causal_lm = model.get_base_model() if hasattr(model, "get_base_model") else model
        decoder, head = causal_lm.get_decoder(), causal_lm.get_output_embeddings()
        width = max(len(r.completion_ids) for r in rollouts)
        logprobs = torch.zeros(len(rollouts), width, device=self.device)
        entropy = torch.zeros(len(rollouts), width, device=self.device)
        mask = torch.zeros(len(rollouts), width, device=self.device)
        by_prompt: dict[tuple[int, ...], list[int]] = {}
        for row, r in enumerate(rollouts):
            if r.completion_ids:
                by_prompt.setdefault(tuple(r.prompt_ids), []).append(row)
        for prompt, rows in by_prompt.items():
            completions = [rollouts[row].completion_ids for row in rows]
            hidden = _shared_prompt_hidden(decoder, list(prompt), completions, self.device)
            for slot, row in enumerate(rows):
                r = rollouts[row]
                n = len(r.completion_ids)
                scores = torch.log_softmax(head(hidden[slot, :n]).float(), dim=-1)
                targets = torch.tensor(r.completion_ids, device=self.device)
                logprobs[row, :n] = scores.gather(-1, targets[:, None])[:, 0]
                entropy[row, :n] = -(scores.exp() * scores).sum(-1).detach()
                mask[row, r.suffix_start : n] = 1.0
        return logprobs, mask, entropy

    def update(self, rollouts: list[TrainRollout], loss: LossFn) -> dict[str, float]:
        """``config.ppo_epochs`` optimiser steps on ``loss(logprobs, old_logprobs, advantages, mask, reference)``,
        ``old_logprobs`` fixed from before the first (the policy that sampled the rollouts), so from the second
        step on the PPO ratio moves and its clip can bind. Loss, gradient norm and clip fraction are the means
        over the steps; the entropy is the sampling policy's."""
        trained = [r for r in rollouts if len(r.completion_ids) > r.suffix_start]
        if not trained:
            return {"loss": 0.0, "grad_norm": 0.0, "entropy": 0.0, "tokens": 0, "clip_fraction": 0.0}
        self.model.train()
        width = max(len(r.completion_ids) for r in trained)
        advantages = torch.zeros(len(trained), width)
        for row, r in enumerate(trained):
            advantages[row, : len(r.completion_ids)] = torch.tensor(r.token_advantages, dtype=torch.float32)
        reference = None
        if self.config.kl_beta > 0:
            with torch.no_grad():
                if self.reference is not None:
                    reference = self.logprobs(trained, self.reference)[0]
                else:
                    with self.model.disable_adapter():
                        reference = self.logprobs(trained)[0]
        old: torch.Tensor | None = None
        steps: list[dict[str, float]] = []
        for _ in range(self.config.ppo_epochs):
            logprobs, mask, entropy = self.logprobs(trained)
            if old is None:  # the first step's log-probs are the sampling policy's
                old, sampled_entropy = logprobs.detach(), entropy
            value, stats = loss(logprobs, old, advantages.to(logprobs.device), mask, reference)
            self.optimizer.zero_grad(set_to_none=True)
            value.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(self.trainable, self.config.grad_clip)
            self.optimizer.step()
            steps.append({"loss": float(value.detach()), "grad_norm": float(grad_norm), **stats})
        self.model.eval()
        tokens = float(mask.sum())
        return {
            **{name: float(np.mean([s[name] for s in steps])) for name in steps[0]},
            "entropy": float((sampled_entropy * mask).sum() / max(tokens, 1.0)),
            "tokens": int(tokens),
        }

    def state(self) -> dict[str, Any]:
        weights = {name: p.detach().cpu() for name, p in self.model.named_parameters() if p.requires_grad}
        return {"weights": weights, "optimizer": self.optimizer.state_dict()}

    def load_state(self, state: dict[str, Any]) -> None:
        parameters = dict(self.model.named_parameters())
        with torch.no_grad():
            for name, value in state["weights"].items():
                parameters[name].copy_(value)
        self.optimizer.load_state_dict(state["optimizer"])


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
    rest = decoder(input_ids=ids, attention_mask=attention, position_ids=positions, cache=cache).last_hidden_state
    first = shared.last_hidden_state[:, -1:].expand(len(completions), -1, -1)
    return torch.cat([first, rest[:, :-1]], dim=1)
