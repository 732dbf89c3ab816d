"""What names a sampling backend (``SamplerSpec``: backend and settings) and the registry of backends: a leaf
module, so that a ``ModelConfig`` can carry a spec without the model package importing the backends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rredcot_viz.registry import Registry
from rredcot_viz.settings import Settings

samplers: Registry[Any] = Registry("sampler")
"""Backend name -> ``Sampler`` subclass (``backends.base``; typed loosely to keep this module a leaf)."""
DEFAULT_SAMPLER = "local"  # this process's own model: no server to start or check


@dataclass(frozen=True)
class SamplerConfig(Settings):
    """Base of every sampling backend's settings (the local sampler has none)."""


@dataclass(frozen=True)
class SamplerSpec:
    """Which backend samples, and its settings: hashable, so the app keeps one sampler per choice and model."""

    backend: str = DEFAULT_SAMPLER
    config: SamplerConfig | None = None  # None: the backend's defaults

    def build(self, lm: Any) -> Any:
        """The backend's ``Sampler`` on ``lm`` (a ``LanguageModel``)."""
        return samplers.get(self.backend)(lm, self.config)

    def describe(self) -> str:
        return self.backend if self.config is None else f"{self.backend} ({self.config})"
