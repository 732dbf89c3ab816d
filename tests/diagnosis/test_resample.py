"""Reset resampling (diagnosis/resample.py): reproducible from the seed, RRPO vs SRPO resets, segment edits."""

from __future__ import annotations

import numpy as np
import pytest
from planted import GIVEN, TRACE, analyzer, answer_rule
from toy import ToySampler, planted_success

from rredcot_viz.diagnosis.resample import ResetConfig, compare_resets, edit_segment, reset_resample
from rredcot_viz.estimators import estimators


def test_reset_resampling_is_reproducible_from_the_seed():
    lm = ToySampler(planted_success)
    first = reset_resample(analyzer(lm), TRACE, GIVEN, 3, ResetConfig(suffixes=8, seed=5))
    again = reset_resample(analyzer(ToySampler(planted_success)), TRACE, GIVEN, 3, ResetConfig(suffixes=8, seed=5))
    other = reset_resample(analyzer(ToySampler(planted_success)), TRACE, GIVEN, 3, ResetConfig(suffixes=8, seed=6))
    assert [r.text for r in first.suffixes] == [r.text for r in again.suffixes]
    assert [r.seed for r in first.suffixes] != [r.seed for r in other.suffixes]
    assert first.prefix_text == "aa\n\nbb\n\n" and first.position == pytest.approx(0.4)
    assert first.rate == pytest.approx(sum(r.correct for r in first.suffixes) / 8) and first.rate > 0.5
    low, high = first.interval
    assert low <= first.rate <= high
    late = reset_resample(analyzer(lm), TRACE, GIVEN, 4, ResetConfig(suffixes=8, seed=5))
    assert late.successes == 0  # after the planted error nothing recovers


def test_rrpo_vs_srpo_batch(tiny, monkeypatch):
    lm = ToySampler(planted_success)
    an = analyzer(lm)

    class Oracle:  # a detector that always finds the planted error
        name = "oracle"

        def detect(self, analyzer, trace, segmenter):
            from rredcot_viz.diagnosis.base import FirstError

            return FirstError("oracle", 2, np.zeros(5))

    comparison = compare_resets(
        an, [TRACE, TRACE.with_changes(trace_id="b")], GIVEN, Oracle(), ResetConfig(suffixes=8), seed=1
    )
    summary = comparison.summary()
    assert summary["srpo_oracle"]["corrected_any_of_G"] == 1.0 and summary["srpo_oracle"]["positions"] == [0.4, 0.4]
    assert 0.0 <= summary["rrpo_random"]["mean_success"] <= 1.0 and len(summary["rrpo_random"]["positions"]) == 2


def test_edit_segment_rescores_and_continues():
    sampler = ToySampler(planted_success)
    sampler.rule = answer_rule  # scores from the answer rule, samples from the success rule
    an = analyzer(sampler)
    result = edit_segment(
        an, TRACE, GIVEN, 3, "ok", estimators.get("answer_only")(trigger="="), ResetConfig(suffixes=4)
    )
    assert "XX" not in result.edited_trace.cot and result.edited.k == result.original.k
    assert result.edited.values.components["R_hat"][3] > result.original.values.components["R_hat"][3]
    # after the edit the planted error is gone: on-policy continuations succeed with probability 0.9
    assert len(result.continuations) == 4 and sum(r.correct for r in result.continuations) >= 3
