"""Token selection for batched sampling: temperature, top-k, top-p, one seeded generator per row.

One generator per row (rather than one per batch) makes a rollout depend only on its own seed and prompt,
so Monte Carlo can add rollouts later and reuse the ones already drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rredcot_viz.errors import ConfigError


@dataclass(frozen=True)
class SamplingConfig:
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 0  # 0 = off
    max_new_tokens: int = 256
    stop_strings: tuple[str, ...] = ()
    stop_on_answer: bool = False  # stop a row once it has written a complete \boxed{...} or "the answer is N."
    batch_size: int = 8

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ConfigError(f"temperature must be >= 0 (0 = greedy), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ConfigError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {self.batch_size}")


def filter_logits(logits: torch.Tensor, config: SamplingConfig) -> torch.Tensor:
    """Temperature-scaled logits (B, V) with tokens outside top-k / the top-p nucleus set to -inf."""
    scaled = logits.float() / config.temperature
    if config.top_k > 0 and config.top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, config.top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if config.top_p < 1.0:
        scaled = _nucleus(scaled, config.top_p)
    return scaled


def _nucleus(scaled: torch.Tensor, top_p: float, head: int = 2048) -> torch.Tensor:
    """Keep the smallest set of top tokens whose mass reaches ``top_p`` (the top token always survives).

    Sorting the whole vocabulary per step is the sampler's main cost on a CPU; the nucleus almost always
    lies within the top ``head`` tokens, so those are found with ``topk`` and the full sort is the fallback.
    """
    probs = torch.softmax(scaled, dim=-1)
    k = min(head, scaled.shape[-1])
    top_probs, order = torch.topk(probs, k, dim=-1)
    before = top_probs.cumsum(dim=-1) - top_probs  # mass of the tokens ranked above each one
    if k < scaled.shape[-1] and bool((before[:, -1] < top_p).any()):
        top_probs, order = torch.sort(probs, dim=-1, descending=True)
        before = top_probs.cumsum(dim=-1) - top_probs
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before < top_p)
    return scaled.masked_fill(~keep, float("-inf"))


def select_tokens(logits: torch.Tensor, config: SamplingConfig, generators: list[torch.Generator]) -> torch.Tensor:
    """Next token per row (B,), greedy when temperature is 0."""
    if config.temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(filter_logits(logits, config), dim=-1)
    picks = [torch.multinomial(probs[row], 1, generator=gen) for row, gen in enumerate(generators)]
    return torch.cat(picks)
