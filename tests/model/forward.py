"""What the model tests share: a text to score, and one full forward pass to check the model's paths against."""

from __future__ import annotations

import torch

TEXT = "So the total is 12 * 4 = 48.\nNext, we subtract 6 to get 42. Wait, let me check again."


def full_logprobs(lm, ids):
    with torch.no_grad():
        return torch.log_softmax(lm.model(torch.tensor([ids])).logits[0].float(), dim=-1)
