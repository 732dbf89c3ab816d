"""``LanguageModel``: the one class the rest of the project talks to.

It wraps a transformers causal LM and its tokenizer and offers exactly what the estimators, attributions
and trainer need, one job per module: prompts and tokens (``core``), per-token log-probs and entropies and
continuations scored after many prefixes with the prefix computation reused (``score``), seeded batched
sampling (``generate``), gradients and attention (``grads``). Every call reports its cost (``meter``).
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.model.generate import Generating
from rredcot_viz.model.grads import Gradients
from rredcot_viz.model.score import Scoring


class LanguageModel(Scoring, Generating, Gradients):
    """Scoring, sampling and gradient calls on one transformers causal LM (see the module docstring)."""

    @classmethod
    def load(cls, config: Any = None, progress_note: list[str] | None = None) -> LanguageModel:
        """Load from a ``ModelConfig`` (default: the embedded SmolLM2-135M-Instruct)."""
        from rredcot_viz.model.loading import ModelConfig, load_model

        loaded = load_model(config or ModelConfig(), progress_note)
        info = {
            "source": loaded.source.kind,
            "path": str(loaded.source.path),
            "gguf_file": loaded.source.gguf_file,
            "load_seconds": round(loaded.load_seconds, 2),
            "notes": loaded.notes,
        }
        return cls(
            loaded.model,
            loaded.tokenizer,
            name=loaded.source.name,
            fingerprint=loaded.fingerprint,
            device=loaded.device,
            dtype=loaded.dtype,
            quantization=loaded.quantization,
            info=info,
        )
