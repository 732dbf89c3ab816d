"""``local``: the project's own seeded sampler on the loaded model (``model/generate.py``), the default."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rredcot_viz.model.backends.base import Sampler
from rredcot_viz.model.backends.spec import samplers

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.model.sampling import SamplingConfig
    from rredcot_viz.types import Generation, PrefixSampling, SampleResult


@samplers.register("local")
class LocalSampler(Sampler):
    """Token-by-token sampling with one seeded generator per row, a batch's common prefix prefilled once."""

    name = "local"

    @property
    def key(self) -> tuple[str, ...]:
        return ()

    def sample(
        self,
        prompts: list[list[int]],
        seeds: list[int],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
    ) -> SampleResult:
        return self.lm.sample(prompts, seeds, config, progress=progress)

    def sample_after_prefixes(
        self,
        ids: list[int],
        requests: list[PrefixSampling],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
    ) -> list[list[Generation]]:
        return self.lm.sample_after_prefixes(ids, requests, config, progress=progress)
