"""The RREDCoT engine: the analyzer (segment a trace, estimate its state values, redistribute the outcome)
and the recorded analyses of the sample traces."""

from rredcot_viz.engine.analyzer import AnalysisConfig, AnalysisResult, Analyzer

__all__ = ["AnalysisConfig", "AnalysisResult", "Analyzer"]
