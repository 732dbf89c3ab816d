"""Leave-one-out over segments (docs/method.md §7.1): phi_t = f(N) - f(N without segment t); K + 1 evaluations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.attribution.base import Attribution, SegmentScores, attributions

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@attributions.register("loo")
class LeaveOneOut(Attribution):
    name = "loo"
    provenance = "paper (arXiv 2606.06475, LOO baseline); Captum FeatureAblation on segments"

    def segment_scores(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> SegmentScores:
        k = segmentation.k
        everything = tuple(range(k))
        subsets = [everything] + [tuple(i for i in everything if i != t) for t in range(k)]
        f = self.subset_values(context, segmentation, subsets, progress)
        values = np.array([f[everything] - f[subsets[t + 1]] for t in range(k)])
        return SegmentScores(self.name, values)
