"""RREDCoT Explorer, the Streamlit face of ``rredcot_viz``: navigation and cached resources only."""

from __future__ import annotations

import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.model.catalogue import CATALOGUE, DEFAULT_MODEL
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig, offline_environment
from rredcot_viz.traces.io import sample_traces

st.set_page_config(page_title="RREDCoT Explorer", layout="wide")


@st.cache_resource(show_spinner="Loading the model (first start converts the embedded GGUF, about a minute)...")
def load_model(config: ModelConfig) -> LanguageModel:
    offline_environment(config.offline)
    return LanguageModel.load(config)


@st.cache_data
def load_samples():
    return sample_traces()


traces = load_samples()
model_key = st.sidebar.selectbox(
    "Model",
    list(CATALOGUE),
    index=list(CATALOGUE).index(DEFAULT_MODEL),
    format_func=lambda key: f"{CATALOGUE[key].display_name} · {CATALOGUE[key].size_mb} MB",
    key="model",
)
st.sidebar.caption(CATALOGUE[model_key].reason)
try:
    model = load_model(ModelConfig(source=model_key))
except RredcotError as error:
    st.error(str(error))
    st.stop()
info = model.info()

st.title("RREDCoT Explorer")
weak = (
    " This small embedded model cannot do arithmetic: its value curves mostly jump only once the answer is "
    "written. Fetch Qwen2.5-Coder-1.5B (`python -m rredcot_viz fetch-model qwen2.5-coder-1.5b`) for estimates "
    "that mean something on a CPU."
    if model_key == DEFAULT_MODEL
    else ""
)
st.caption(
    f"Model: **{info['name']}** on {info['device']} ({info['dtype']}, context {info['context_length']} tokens)." + weak
)
labels = {f"{t.metadata.get('title', t.trace_id)} ({t.metadata.get('kind', '?')})": t for t in traces}
choice = st.sidebar.selectbox("Sample trace", list(labels), key="trace")
trace = labels[choice]
tokens = len(model.encode(trace.cot))
col_q, col_meta = st.columns([3, 1])
col_q.subheader("Question")
col_q.markdown(trace.question)
col_meta.metric("Reasoning tokens", tokens)
col_meta.metric("Answer", str(trace.answer), help=f"reference: {trace.reference_answer}")
col_meta.metric("Outcome R", "correct" if trace.outcome == 1.0 else "wrong" if trace.outcome == 0.0 else "unknown")
st.subheader("Chain of thought")
for index, step in enumerate(trace.steps or (trace.cot,), start=1):
    st.markdown(f"**{index}.** {step}")
