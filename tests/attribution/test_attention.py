"""Attention mass (attribution/attention.py) on a tiny random transformer."""

from __future__ import annotations

from rredcot_viz.attribution import attributions
from rredcot_viz.engine import Analyzer
from rredcot_viz.segmenters import segmenters

from .cases import TRACE


def test_attention_mass_is_a_share_of_the_query_attention(tiny):
    analyzer = Analyzer(tiny)
    context, segmentation = analyzer.context(TRACE), analyzer.segment(TRACE, segmenters.get("line")())
    result = attributions.get("attention")().attribute(context, segmentation)
    assert result.values.shape == (segmentation.k,) and (result.values > 0).all() and result.values.sum() < 1.0
    assert tiny.model.config._attn_implementation == "sdpa"  # restored after the eager pass
