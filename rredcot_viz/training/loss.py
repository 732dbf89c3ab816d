"""Policy-gradient losses on per-token advantages (docs/method.md §5, §9.4).

``reinforce`` is SRPO's ``loss_mode = srpo``: the sequence mean of token means of A * log pi over the
trained (unmasked) tokens, so every trajectory weighs the same whatever its length. ``ppo_clip`` is the
clipped surrogate with token-mean aggregation. An optional KL term to the starting policy uses the
low-variance k3 estimator.
"""

from __future__ import annotations

import torch


def policy_loss(
    logprobs: torch.Tensor,  # (B, T) log pi of the sampled tokens under the current policy
    old_logprobs: torch.Tensor,  # (B, T) the same at sampling time (detached)
    advantages: torch.Tensor,  # (B, T)
    mask: torch.Tensor,  # (B, T) 1 for trained tokens (suffix), 0 for prompt, shared prefix and padding
    kind: str = "reinforce",
    clip_eps: float = 0.2,
    ref_logprobs: torch.Tensor | None = None,
    kl_beta: float = 0.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    mask = mask.float()
    tokens = mask.sum(-1).clamp(min=1)
    if kind == "reinforce":
        loss = -((advantages * logprobs * mask).sum(-1) / tokens).mean()
        clipped = 0.0
    else:
        ratio = torch.exp(torch.clamp(logprobs - old_logprobs, -20, 20))
        unclipped = ratio * advantages
        clipped_ratio = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
        surrogate = torch.minimum(unclipped, clipped_ratio)
        loss = -(surrogate * mask).sum() / mask.sum().clamp(min=1)
        clipped = float(((surrogate != unclipped).float() * mask).sum() / mask.sum().clamp(min=1))  # clip active
    stats = {"clip_fraction": clipped}
    if ref_logprobs is not None and kl_beta > 0:
        delta = ref_logprobs - logprobs
        kl = ((torch.exp(delta) - delta - 1) * mask).sum() / mask.sum().clamp(min=1)
        loss = loss + kl_beta * kl
        stats["kl"] = float(kl.detach())
    return loss, stats
