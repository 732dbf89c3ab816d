"""Streamlit-cached resources shared by every page and session: the store, models, analyzers, jobs.

One process holds one DuckDB connection (``store``) and hands out cursors; models are loaded once per
configuration; every analyzer of a model shares that model's score cache, backed by the store, so a
setting another session already computed is instant.
"""

from __future__ import annotations

import streamlit as st

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.jobs import JobManager
from rredcot_viz.model.backends import Sampler
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig, offline_environment
from rredcot_viz.scoring import BoundaryCache
from rredcot_viz.store import Store
from rredcot_viz.traces.io import sample_traces


@st.cache_resource(show_spinner="Opening the store...")
def store() -> Store:
    return Store()


def model(config: ModelConfig) -> LanguageModel:
    """The loaded model: one per model, whichever sampler the sidebar chose."""
    return _loaded_model(config.loading)


@st.cache_resource(show_spinner="Loading the model (the first start converts the embedded GGUF, about a minute)...")
def _loaded_model(config: ModelConfig) -> LanguageModel:
    offline_environment(config.offline)
    return LanguageModel.load(config)


APP_SCORED_TRACES = 256
"""Traces whose scores the app keeps in memory per model (every open tab's, the Dataset page's batch), on top of
the store's copy; an analyzer's own contexts are fewer (``engine.analyzer.LIVE_CONTEXTS``)."""


def score_cache(config: ModelConfig) -> BoundaryCache:
    return _score_cache(config.loading)


@st.cache_resource
def _score_cache(config: ModelConfig) -> BoundaryCache:
    return BoundaryCache(max_contexts=APP_SCORED_TRACES, backend=store())


@st.cache_resource
def sampler(config: ModelConfig) -> Sampler:
    """Where the model's rollouts are drawn (the sidebar's choice); another model makes another sampler, whose
    check against the server runs again."""
    return config.sampler.build(model(config))


@st.cache_resource
def analyzer(config: ModelConfig, analysis: AnalysisConfig) -> Analyzer:
    return Analyzer(model(config), analysis, cache=score_cache(config), sampler=sampler(config))


@st.cache_resource
def jobs() -> JobManager:
    return JobManager(workers=1, store=store())  # in the store: every tab sees every job


@st.cache_resource
def samples() -> list:
    traces = sample_traces()
    store().put_traces(traces, "samples")
    return traces


@st.cache_resource(show_spinner="Loading the trained adapter...", max_entries=4)
def trained_analyzer(config: ModelConfig, run_id: str, checkpoint: str) -> tuple[Analyzer, int]:
    """An analyzer over ``run_id``'s policy at ``checkpoint`` (the name keys the cache: a newer one reloads)."""
    from rredcot_viz.workflows.train import trained_policy

    policy, step = trained_policy(model(config), store(), run_id)
    return Analyzer(policy, AnalysisConfig(), cache=score_cache(config)), step


@st.cache_resource(show_spinner="Sampling the base model on held-out problems...", max_entries=8)
def held_out_traces(config: ModelConfig, run_id: str) -> list:
    from rredcot_viz.workflows.train import held_out_traces, stored_run

    return held_out_traces(model(config), stored_run(store(), run_id)[0])
