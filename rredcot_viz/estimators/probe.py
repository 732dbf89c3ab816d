"""``probe``: state values read off the model's hidden states by a value probe fitted to its own Monte Carlo
values (docs/method.md §6.1). V_t = sigmoid(w . h_layer(last token of s_t) + b) for t = 1..K, V_{K+1} := R; sigma
by the same redistribution as every estimator.

Cost: one forward pass over the trace for the hidden states (metered as ``hidden_states``; it is not shared
with the token-stats pass), no sampled token and no scored continuation. Offered where a probe was fitted for
the loaded model at its precision (``value_probe.find_probe``); elsewhere it says so and how to fit one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.errors import MissingProbeError
from rredcot_viz.estimators.base import EstimatorConfig, ValueEstimator, estimators
from rredcot_viz.estimators.value_probe import ValueProbe, precision_of, require_probe
from rredcot_viz.settings import setting
from rredcot_viz.types import StateValues

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@dataclass(frozen=True)
class ProbeConfig(EstimatorConfig):
    probe_file: str = setting("", "value probe file (empty: the one fitted for the loaded model and precision)",
                              advanced=True)  # fmt: skip


@estimators.register("probe")
class ProbeEstimator(ValueEstimator):
    name = "probe"
    Config = ProbeConfig
    provenance = "design choice: a linear probe of hidden states (ReProbe arXiv 2511.06209; arXiv 2511.14773)"
    needs = ("outcome",)
    # cheap, but only where a probe was fitted for the loaded model: not among the live estimators a page opens on
    # or falls back to (Compare offers it, and says how to fit one where there is none)
    live = False
    fitted = True

    def probe(self, lm: LanguageModel) -> ValueProbe:
        """The configured probe file, else the one fitted for ``lm`` at its precision (``MissingProbeError``
        naming the fit command when there is none). A file fitted for another model or precision is refused."""
        if not self.config.probe_file:
            return require_probe(lm)
        probe = ValueProbe.load(self.config.probe_file)
        if (probe.fingerprint, probe.precision) != (lm.fingerprint, precision_of(lm)):
            raise MissingProbeError(
                f"value probe {self.config.probe_file} was fitted for {probe.model} ({probe.precision}), not the "
                f"loaded {lm.name} ({precision_of(lm)}); fit one for this model with `python -m rredcot_viz probe fit`"
            )
        return probe

    def state_values(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> StateValues:
        self.check(context.trace)
        probe = self.probe(context.lm)
        # every state, s_{K+1} too (shown as V_probe; the curve ends at V_{K+1} := R like every estimator's)
        read = probe.predict(context.hidden_states(segmentation.state_prefixes)[probe.layer])
        return StateValues(
            self.name,
            np.append(read[:-1], context.trace.outcome),
            {"V_probe": read},
            notes=[f"value probe: {probe.describe()}; a probe of the model's own beliefs, not a verifier"],
        )
