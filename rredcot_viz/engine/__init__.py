"""The RREDCoT engine: trace contexts, the all-boundary cache and the analyzer."""

from rredcot_viz.engine.analyzer import AnalysisConfig, AnalysisResult, Analyzer
from rredcot_viz.engine.cache import BoundaryCache
from rredcot_viz.engine.context import PromptConfig, TraceContext

__all__ = ["AnalysisConfig", "AnalysisResult", "Analyzer", "BoundaryCache", "PromptConfig", "TraceContext"]
