"""The model layer: catalogue of offline models, loading (GGUF conversion cache, quantization), and the
``LanguageModel`` scoring/sampling wrapper."""

from rredcot_viz.model.catalogue import CATALOGUE, DEFAULT_MODEL, CatalogueModel
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.packing import Continuation
from rredcot_viz.model.quantization import quiet_bitsandbytes
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.types import CallCost, ContinuationScores, Encoding, Generation, SampleResult, TokenStats

quiet_bitsandbytes()  # before anything imports bitsandbytes (an 8/4-bit load, or peft for LoRA)

__all__ = [
    "CATALOGUE",
    "DEFAULT_MODEL",
    "CallCost",
    "CatalogueModel",
    "Continuation",
    "ContinuationScores",
    "Encoding",
    "Generation",
    "LanguageModel",
    "ModelConfig",
    "SampleResult",
    "SamplingConfig",
    "TokenStats",
]
