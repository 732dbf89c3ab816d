"""First-error detectors (registered in ``detectors``), the ProcessBench evaluation harness and reset
resampling (docs/method.md §8, §9)."""

# Each import registers detectors; the order is the order the CLI and the app list them in.
from rredcot_viz.diagnosis import value_detectors, loo_detector, self_localize, mc_detector, step_verifier  # noqa: F401, I001
from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors

__all__ = ["NO_ERROR", "Detector", "DetectorConfig", "FirstError", "detectors"]
