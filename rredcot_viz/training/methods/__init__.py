"""Training methods, registered by name in ``methods``: one file per method, each with its ``Config``."""

# Each import registers a method; the order is the order the CLI and the app list them in.
from rredcot_viz.training.methods import grpo, rredcot, rrpo, srpo  # noqa: F401
from rredcot_viz.training.methods.base import TrainingMethod, methods

__all__ = ["TrainingMethod", "methods"]
