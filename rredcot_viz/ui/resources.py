"""Streamlit-cached resources shared by every page and session: the store, models, analyzers, jobs.

One process holds one DuckDB connection (``store``) and hands out cursors; models are loaded once per
configuration; every analyzer of a model shares that model's score cache, backed by the store, so a
setting another session already computed is instant.
"""

from __future__ import annotations

import streamlit as st

from rredcot_viz.engine import AnalysisConfig, Analyzer, BoundaryCache
from rredcot_viz.jobs import JobManager
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig, offline_environment
from rredcot_viz.store import Store
from rredcot_viz.traces.io import sample_traces


@st.cache_resource(show_spinner="Opening the store...")
def store() -> Store:
    return Store()


@st.cache_resource(show_spinner="Loading the model (the first start converts the embedded GGUF, about a minute)...")
def model(config: ModelConfig) -> LanguageModel:
    offline_environment(config.offline)
    return LanguageModel.load(config)


@st.cache_resource
def score_cache(config: ModelConfig) -> BoundaryCache:
    return BoundaryCache(max_contexts=256, backend=store())


@st.cache_resource
def analyzer(config: ModelConfig, analysis: AnalysisConfig) -> Analyzer:
    return Analyzer(model(config), analysis, cache=score_cache(config))


@st.cache_resource
def jobs() -> JobManager:
    return JobManager(workers=1)


@st.cache_resource
def samples() -> list:
    traces = sample_traces()
    store().put_traces(traces, "samples")
    return traces
