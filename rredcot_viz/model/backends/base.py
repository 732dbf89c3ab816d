"""The sampling-backend interface: where rollouts come from.

Monte Carlo, reset resampling and the sampling detectors ask a ``Sampler`` for continuations; the ``local``
one is the project's own seeded sampler on the loaded model, ``openai`` sends the same requests (token ids in,
token ids out) to an OpenAI-compatible inference server such as vLLM. Both answer with the same
``Generation`` records, so what is stored and graded does not depend on the backend. A backend is registered
by name; a ``SamplerSpec`` (name and settings) is what the CLI, the app's model sidebar and configs carry.

The trainer does not use this: it samples from the policy it is updating (the TRL plug-in has TRL's own vLLM
path for that).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from rredcot_viz.errors import ConfigError
from rredcot_viz.model.backends.spec import SamplerConfig, SamplerSpec
from rredcot_viz.settings import with_overrides

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.model.sampling import SamplingConfig
    from rredcot_viz.types import Generation, PrefixSampling, SampleResult


class Sampler(ABC):
    """Seeded sampling of continuations for ``lm``'s prompts, here or elsewhere.

    ``lm`` is the loaded model: its tokenizer turns text into the ids that are sent, its stop rules end a
    rollout, and a remote backend checks the server against it before sampling."""

    name: ClassVar[str]
    Config: ClassVar[type[SamplerConfig]] = SamplerConfig
    remote: ClassVar[bool] = False  # draws elsewhere (a server), so it is checked against the loaded model first

    def __init__(self, lm: LanguageModel, config: SamplerConfig | None = None, **overrides: Any):
        base = config or self.Config()
        if not isinstance(base, self.Config):
            raise ConfigError(f"sampler {self.name!r} needs a {self.Config.__name__}, got {type(base).__name__}")
        self.lm = lm
        self.config = with_overrides(base, f"sampler {self.name!r}", overrides)

    @property
    def key(self) -> tuple[str, ...]:
        """Parts added to a rollout's store key: rollouts of one backend are never read as another's (the
        local sampler adds none, so rollouts stored before backends existed keep their keys)."""
        return ("sampler", self.name)

    def check(self) -> str:
        """Make sure the backend samples from ``lm`` (raise a ``SamplerError`` if not); a line saying so."""
        return f"{self.name}: samples from {self.lm.name}"

    @abstractmethod
    def sample(
        self,
        prompts: list[list[int]],
        seeds: list[int],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
    ) -> SampleResult:
        """One continuation per prompt, row ``i`` seeded with ``seeds[i]`` (``LanguageModel.sample``'s contract)."""

    @abstractmethod
    def sample_after_prefixes(
        self,
        ids: list[int],
        requests: list[PrefixSampling],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
    ) -> list[list[Generation]]:
        """Continuations after many prefixes of one sequence (``LanguageModel.sample_after_prefixes``)."""


def build_sampler(lm: LanguageModel, spec: SamplerSpec | None = None) -> Sampler:
    """The sampler ``spec`` names, on ``lm`` (default: the local one)."""
    return (spec or SamplerSpec()).build(lm)
