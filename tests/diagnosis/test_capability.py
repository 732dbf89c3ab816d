"""The capability check (diagnosis/capability.py): modes, what the other records lack, --strict."""

from __future__ import annotations

import pytest
from planted import FAILED

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.capability import capability, check_all
from rredcot_viz.errors import RredcotError
from rredcot_viz.workflows.diagnose import runnable_pct


def test_capability_counts_modes_and_what_the_others_lack():
    unlabelled = FAILED.with_changes(correct=None, cot="no answer here", steps=("no answer here",), first_error=0)
    referenced = FAILED.with_changes(reference_answer="7")
    traces = [FAILED, unlabelled, referenced]
    loo = capability(detectors.get("loo")(), traces)
    assert loo.runnable == [0, 2] and dict(loo.modes) == {"own": 1, "reference": 1}
    assert loo.label == "loo[own/reference]" and dict(loo.lacking) == {"answer": 1, "outcome": 1}
    assert loo.line().startswith("loo[own/reference]: runs on 2 of 3 records (own 1, reference 1); 1 lack")
    fixed = capability(detectors.get("min_sigma")(estimator="rredcot"), traces)
    assert fixed.runnable == [] and fixed.label == "min_sigma[rredcot]"  # named by the option even when none run
    verifier = capability(detectors.get("step_verifier")(), traces)
    assert verifier.complete and verifier.label == "step_verifier"
    reports = check_all([detectors.get("step_verifier")(), detectors.get("loo")()], traces)
    assert runnable_pct(reports, 3) == pytest.approx(200 / 3)
    with pytest.raises(RredcotError, match=r"--strict.*loo\[own/reference\]: runs on 2 of 3"):
        check_all([detectors.get("loo")()], traces, strict=True)
