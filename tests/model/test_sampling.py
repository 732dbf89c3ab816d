"""Token selection (model/sampling.py): top-p samples the renormalised nucleus, however wide."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rredcot_viz.model.sampling import SamplingConfig, select_tokens


def draw_counts(probs: list[float], config: SamplingConfig, draws: int = 4000) -> np.ndarray:
    logits = torch.log(torch.tensor([probs] * draws))
    picks = select_tokens(logits, config, [torch.Generator().manual_seed(i) for i in range(draws)])
    return np.bincount(picks.numpy(), minlength=len(probs)) / draws


def test_top_p_samples_the_renormalised_nucleus():
    probs = [0.5, 0.3, 0.15, 0.05]
    frequencies = draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.75))  # 0.5 < 0.75 <= 0.5 + 0.3
    assert frequencies[2:].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(frequencies[:2], [0.625, 0.375], atol=0.03)
    assert draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.4)).tolist() == [1.0, 0.0, 0.0, 0.0]
    both = draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.8, top_k=3))  # nucleus of the renormalised top-3
    np.testing.assert_allclose(both, [0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0], atol=0.03)


def test_a_nucleus_wider_than_the_first_head_is_found_whole():
    """A flat tail puts 300 tokens in the nucleus: the head grows past its first 64 and every one is drawn."""
    probs = [0.1] + [0.9 / 3000] * 3000
    frequencies = draw_counts(probs, SamplingConfig(temperature=1.0, top_p=0.19), draws=20000)
    kept = int(np.ceil((0.19 - 0.1) / (0.9 / 3000)))  # tokens needed after the top one to reach 0.19
    drawn = int((frequencies[1:] > 0).sum())  # which of the equal tail tokens are kept is arbitrary: count them
    assert kept - 1 <= drawn <= kept + 1
    assert frequencies[0] == pytest.approx(0.1 / 0.19, abs=0.02)
