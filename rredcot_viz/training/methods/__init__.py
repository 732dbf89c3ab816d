"""Training methods, registered by name in ``methods``."""

# Each import registers methods; the order is the order the CLI and the app list them in.
from rredcot_viz.training.methods import grpo, rredcot, resets  # noqa: F401, I001
from rredcot_viz.training.methods.base import TrainingMethod, methods

__all__ = ["TrainingMethod", "methods"]
