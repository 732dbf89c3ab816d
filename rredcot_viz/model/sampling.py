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


def select_tokens(logits: torch.Tensor, config: SamplingConfig, generators: list[torch.Generator]) -> torch.Tensor:
    """Next token per row (B,), greedy when temperature is 0.

    The same distribution as sampling from ``softmax(filter_logits(...))``, drawn among the kept tokens only:
    the nucleus is found in a small sorted head of the vocabulary (grown until every row's nucleus fits in
    it), and each row's draw is over that head rather than the whole vocabulary (the sampler's main cost on
    a CPU was a 2048-wide top-k and a 49k-wide multinomial per row and step)."""
    if config.temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits.float() / config.temperature, dim=-1)
    vocabulary = probs.shape[-1]
    limit = config.top_k if 0 < config.top_k < vocabulary else vocabulary
    head = limit if config.top_p >= 1.0 or config.top_k else min(64, limit)
    while True:
        top_probs, order = torch.topk(probs, head, dim=-1)
        if config.top_k:
            top_probs = top_probs / top_probs.sum(dim=-1, keepdim=True)  # top-k first, then the nucleus of it
        before = top_probs.cumsum(dim=-1) - top_probs  # mass of the tokens ranked above each one
        if head == limit or config.top_p >= 1.0 or bool((before[:, -1] >= config.top_p).all()):
            break
        head = min(head * 8, limit)
    weights = top_probs * (before < config.top_p) if config.top_p < 1.0 else top_probs
    picks = [torch.multinomial(weights[row], 1, generator=gen) for row, gen in enumerate(generators)]
    return order.gather(-1, torch.cat(picks)[:, None])[:, 0]
