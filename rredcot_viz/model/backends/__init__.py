"""Sampling backends: where rollouts are drawn (``base`` has the interface; one file per backend)."""

from rredcot_viz.model.backends import local, openai  # noqa: F401  (each registers its backend)
from rredcot_viz.model.backends.base import Sampler, build_sampler
from rredcot_viz.model.backends.spec import DEFAULT_SAMPLER, SamplerConfig, SamplerSpec, samplers

__all__ = ["DEFAULT_SAMPLER", "Sampler", "SamplerConfig", "SamplerSpec", "build_sampler", "samplers"]
