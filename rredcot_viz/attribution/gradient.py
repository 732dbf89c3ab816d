"""Gradient attributions on segments (docs/method.md §7.3): gradient x input and integrated gradients at the
embedding level, summed over each segment's tokens, for F(e) = f(N) (all segments kept).

Question, trigger and target embeddings stay fixed. Integrated gradients use a zero baseline on the segment
tokens only and a right Riemann sum over ``steps`` points; completeness (sum of attributions = F(e) - F(e'))
is reported as an absolute and relative error, with a warning above 5% that suggests more steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from rredcot_viz.attribution.base import Attribution, AttributionConfig, SegmentScores, attributions
from rredcot_viz.settings import setting

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@dataclass(frozen=True)
class GradientConfig(AttributionConfig):
    saliency: bool = setting(False, "sum the gradient norms ||dF/de_j|| instead of e_j . dF/de_j")


@dataclass(frozen=True)
class IntegratedGradientsConfig(AttributionConfig):
    steps: int = setting(32, "interpolation points of the path integral", low=1)
    batch: int = setting(4, "interpolation points per forward/backward pass", low=1, advanced=True)
    baseline: Literal["zero", "pad"] = setting("zero", "the segment tokens' baseline embedding: zeros, or the pad "
                                               "token's")  # fmt: skip
    rule: Literal["riemann_right", "gauss_legendre"] = setting("riemann_right", "quadrature of the path integral",
                                                               advanced=True)  # fmt: skip


def quadrature(steps: int, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Points alpha in (0, 1] and weights summing to 1 for the path integral."""
    if rule == "gauss_legendre":
        nodes, weights = np.polynomial.legendre.leggauss(steps)
        return (nodes + 1) / 2, weights / 2
    return np.arange(1, steps + 1) / steps, np.full(steps, 1 / steps)


def _sequence(method: Attribution, context: TraceContext, segmentation: Segmentation):
    """ids of prompt ‖ segments ‖ trigger ‖ target, the slice of segment tokens, and the target ids."""
    region = segmentation.state_prefixes[-1]
    target = context.lm.encode(method.target(context))
    ids = [*context.prompt_ids, *context.response.ids[:region], *context.lm.encode(method.trigger(context)), *target]
    start = len(context.prompt_ids)
    return ids, slice(start, start + region), target


def _per_segment(token_scores: np.ndarray, segmentation: Segmentation) -> np.ndarray:
    return np.array([token_scores[a:b].sum() for a, b in (s.token_span for s in segmentation.segments)])


@attributions.register("grad_x_input")
class GradientTimesInput(Attribution):
    name = "grad_x_input"
    Config = GradientConfig
    provenance = "paper (arXiv 2606.06475, gradient baseline; variant not named); Inseq input_x_gradient"

    def segment_scores(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> SegmentScores:
        ids, variable, target = _sequence(self, context, segmentation)
        embeddings = context.lm.input_embeddings(ids).requires_grad_(True)
        value = context.lm.target_logprob_from_embeddings(embeddings[None], target)[0]
        (gradient,) = torch.autograd.grad(value, embeddings)
        grad = gradient[variable]
        if self.config.saliency:
            tokens = grad.norm(dim=-1)
        else:
            tokens = (grad * embeddings[variable].detach()).sum(-1)
        values = _per_segment(tokens.double().cpu().numpy(), segmentation)
        checks = {"F": float(value.detach())}
        return SegmentScores(self.name, values, checks=checks)


@attributions.register("integrated_gradients")
class IntegratedGradients(Attribution):
    name = "integrated_gradients"
    Config = IntegratedGradientsConfig
    provenance = "Sundararajan et al. 2017; Captum LayerIntegratedGradients on the embedding layer"

    def segment_scores(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> SegmentScores:
        ids, variable, target = _sequence(self, context, segmentation)
        embeddings = context.lm.input_embeddings(ids)
        baseline = embeddings.clone()
        if self.config.baseline == "zero":
            baseline[variable] = 0.0
        else:
            pad = context.lm.input_embeddings([context.lm.tokenizer.pad_token_id])[0]
            baseline[variable] = pad
        delta = embeddings - baseline
        steps = self.config.steps
        alphas, weights = quadrature(steps, self.config.rule)
        weighted_gradient = torch.zeros_like(embeddings)
        for done, start in enumerate(range(0, steps, self.config.batch), start=1):
            chunk = torch.tensor(
                alphas[start : start + self.config.batch], dtype=torch.float32, device=embeddings.device
            )
            weight = torch.tensor(
                weights[start : start + self.config.batch], dtype=torch.float32, device=embeddings.device
            )
            points = (baseline[None] + chunk[:, None, None] * delta[None]).requires_grad_(True)
            values = context.lm.target_logprob_from_embeddings(points, target)
            (gradient,) = torch.autograd.grad(values.sum(), points)
            weighted_gradient += (weight[:, None, None] * gradient).sum(0)
            if progress:
                progress(done, -(-steps // self.config.batch))
        tokens = (delta * weighted_gradient).sum(-1)[variable]
        with torch.no_grad():
            ends = context.lm.target_logprob_from_embeddings(torch.stack([embeddings, baseline]), target)
        difference = float(ends[0] - ends[1])
        error = abs(float(tokens.sum()) - difference)
        relative = error / abs(difference) if difference else float("inf")
        notes = []
        if relative > 0.05:
            notes.append(
                f"completeness error {relative:.1%} > 5% with {steps} steps: use more steps, the gauss_legendre rule, "
                "or the pad baseline (a zero baseline sits on the RMSNorm singularity of pre-norm transformers)"
            )
        values = _per_segment(tokens.double().cpu().numpy(), segmentation)
        checks = {
            "completeness_error": error,
            "completeness_relative": relative,
            "F": float(ends[0]),
            "F_baseline": float(ends[1]),
        }
        return SegmentScores(self.name, values, checks=checks, notes=notes)
