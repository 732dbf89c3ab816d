"""Gradient and attention calls for the attribution methods: input embeddings as leaves, a differentiable
target log-prob from embeddings, and the attention each position receives."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rredcot_viz.model.core import ModelCore
from rredcot_viz.model.meter import model_call
from rredcot_viz.model.quantization import differentiable
from rredcot_viz.types import CallCost


class Gradients(ModelCore):
    def input_embeddings(self, ids: list[int]) -> torch.Tensor:
        """Float32 copy of the input embeddings of ``ids`` (T, d), detached: a leaf for attribution gradients."""
        with torch.no_grad():
            layer = self.model.get_input_embeddings()
            return layer(torch.tensor([ids], device=self.device))[0].float().clone()

    @model_call("gradient_forward")
    def target_logprob_from_embeddings(
        self, embeddings: torch.Tensor, target: list[int], *, cost: CallCost
    ) -> torch.Tensor:
        """Differentiable sum of log p(target) for each row of ``embeddings`` (B, T, d) whose last
        ``len(target)`` positions hold the target tokens; returns (B,)."""
        if self.quantization.startswith("4bit"):
            differentiable(self.model)
        n = len(target)
        keep = torch.arange(embeddings.shape[1] - n - 1, embeddings.shape[1] - 1, device=self.device)
        dtype = next(self.model.parameters()).dtype
        dtype = dtype if dtype.is_floating_point else torch.float32
        with self._guard(embeddings.shape[1]):
            cost.forward_passes += 1
            cost.tokens_processed += embeddings.shape[0] * embeddings.shape[1]
            output = self.model(inputs_embeds=embeddings.to(dtype), logits_to_keep=keep)
        logprobs = torch.log_softmax(output.logits.float(), dim=-1)  # (B, n, V)
        index = torch.tensor(target, device=self.device)[None, :, None].expand(embeddings.shape[0], n, 1)
        return logprobs.gather(-1, index)[..., 0].sum(-1)

    @model_call("attention")
    def attention_to_keys(self, ids: list[int], queries: list[int], *, cost: CallCost) -> np.ndarray:
        """Attention each key position receives from the ``queries`` positions, averaged over queries, heads
        and layers (T,). Runs with eager attention (SDPA does not return weights), one layer at a time."""
        attention_layers = [
            m for m in self.model.modules() if type(m).__name__.endswith("Attention") and hasattr(m, "layer_idx")
        ]
        totals: list[torch.Tensor] = []
        query_index = torch.tensor(queries, device=self.device)

        def capture(_module: Any, _inputs: Any, output: Any) -> None:
            weights = output[1]  # (B, H, Q, K), present under eager attention
            totals.append(weights[0][:, query_index, :].float().mean(dim=(0, 1)))

        previous = self.model.config._attn_implementation
        hooks = [layer.register_forward_hook(capture) for layer in attention_layers]
        cost.forward_passes += 1
        cost.tokens_processed += len(ids)
        try:
            self.model.set_attn_implementation("eager")
            with self._guard(len(ids)), torch.inference_mode():
                self.model(torch.tensor([ids], device=self.device), logits_to_keep=1)
        finally:
            for hook in hooks:
                hook.remove()
            self.model.set_attn_implementation(previous)
        if len(totals) != len(attention_layers) or not totals:
            raise RuntimeError(f"captured attention from {len(totals)} of {len(attention_layers)} layers")
        return torch.stack(totals).mean(dim=0).double().cpu().numpy()
