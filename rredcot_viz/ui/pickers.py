"""Sidebar pickers: the model, and the trace (samples, stored, pasted or uploaded). They gather choices and hand
back library objects; they compute nothing."""

from __future__ import annotations

from typing import get_args

import streamlit as st
import torch

from rredcot_viz.engine import AnalysisConfig
from rredcot_viz.errors import RredcotError
from rredcot_viz.model.backends import SamplerSpec, samplers
from rredcot_viz.model.catalogue import CATALOGUE, DEFAULT_MODEL
from rredcot_viz.model.loading import ModelConfig, Quantization
from rredcot_viz.segmenters import SegmenterInput
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui import resources
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.ui.upload import import_uploaded, upload_widget

CUSTOM = "custom"


def model_picker() -> ModelConfig:
    """Sidebar model choice: the catalogue, or any HF id / model directory / GGUF path."""
    keys = [*CATALOGUE, CUSTOM]
    key = st.sidebar.selectbox(
        "Model",
        keys,
        index=keys.index(st.session_state.get("model", DEFAULT_MODEL)),
        format_func=lambda k: (
            "Other: HF id, model directory or GGUF file"
            if k == CUSTOM
            else f"{CATALOGUE[k].display_name} · {CATALOGUE[k].size_mb} MB"
        ),
        key="model",
    )
    source = key
    if key == CUSTOM:
        source = st.sidebar.text_input(
            "Model id or path", key="custom_model", placeholder="owner/name or /path/model.gguf"
        )
        if not source:
            st.sidebar.info(
                "Enter a Hugging Face id (loaded offline from the local cache), a directory or a .gguf file."
            )
            source = DEFAULT_MODEL
    else:
        st.sidebar.caption(CATALOGUE[key].reason)
    quantization = ModelConfig.quantization
    if torch.cuda.is_available():
        quantization = st.sidebar.radio("Quantization", get_args(Quantization), horizontal=True, key="quantization")
    else:
        st.sidebar.caption("8-bit / 4-bit quantization needs a CUDA GPU; this machine runs full precision on the CPU.")
    config = ModelConfig(source=source, quantization=quantization, sampler=sampler_picker())
    if config.sampler.backend != "local":
        sampler_check(config)
    return config


def sampler_picker() -> SamplerSpec:
    """Where rollouts (Monte Carlo, resets, sampling detectors) are drawn: this model, or a server such as vLLM."""
    name = st.sidebar.selectbox(
        "Rollouts from",
        samplers.names(),
        key="sampler",
        format_func=lambda n: "this model (local)" if n == "local" else f"an inference server ({n})",
        help="An OpenAI-compatible server (vLLM: `scripts/dev engine`) serving the same weights; it is checked "
        "against the loaded model first (vLLM on a CPU drew Monte Carlo rollouts about twice as fast as this "
        "model here, bench/sampling.py; a GPU server far faster). Training always samples its own policy.",
    )
    config_type = samplers.get(name).Config
    with st.sidebar:
        values = settings_form(config_type, f"sampler_{name}", columns=1, more="Server settings")
    try:
        return SamplerSpec(name, config_type(**values) if values else None)
    except RredcotError as error:
        st.sidebar.error(f"{error}; sampling locally until it is fixed")
        return SamplerSpec()


def sampler_check(config: ModelConfig) -> None:
    """The server checked against the loaded model (once per model and server): its result, or what is wrong."""
    try:
        line = resources.sampler(config).check()
    except RredcotError as error:
        st.sidebar.error(str(error))
        return
    st.sidebar.caption(f"Rollouts from {line}")


def model_warning(config: ModelConfig) -> None:
    if config.source == DEFAULT_MODEL:
        st.info(
            "The embedded SmolLM2-135M cannot do arithmetic: its value curves mostly jump only once the answer is "
            "written, so read its estimates as a demonstration of the pipeline. Qwen2.5-Coder-1.5B "
            "(`python -m rredcot_viz fetch-model qwen2.5-coder-1.5b`) is the offline model whose estimates mean "
            "something on a CPU.",
            icon="ℹ️",
        )


def _label(trace: Trace) -> str:
    title = trace.metadata.get("title") or trace.trace_id or trace.question[:50]
    outcome = {1.0: "correct", 0.0: "failed"}.get(trace.outcome, "outcome unknown")
    return f"{title} · {outcome}"


def trace_picker(only_failed: bool = False) -> Trace | None:
    """Sidebar trace choice from the samples, the store, pasted text or an uploaded file."""
    store = resources.store()
    samples = resources.samples()
    source = st.sidebar.radio(
        "Trace source", ["Samples", "Stored", "Paste", "Upload"], horizontal=True, key="trace_source"
    )
    if source == "Paste":
        _paste_form()
    elif source == "Upload":
        _upload_form()
    if source == "Samples":
        pool = samples
    else:
        collection = None
        collections = store.collections()
        if source == "Stored" and collections:
            collection = st.sidebar.selectbox(
                "Collection", list(collections), key="collection", format_func=lambda c: f"{c} ({collections[c]})"
            )
        pool = (
            store.traces(collection, limit=2000)
            if source == "Stored"
            else store.traces("user") + store.traces("upload")
        )
    if only_failed:
        pool = [t for t in pool if t.outcome == 0.0]
    if not pool:
        st.sidebar.info(
            "No traces here yet: paste one or upload a file."
            if not only_failed
            else "No failed traces here: pick another source or collection."
        )
        return None
    hashes = [t.content_hash for t in pool]
    wanted = st.session_state.get("trace_hash")
    index = hashes.index(wanted) if wanted in hashes else 0
    chosen = st.sidebar.selectbox(
        "Trace", hashes, index=index, format_func=lambda h: _label(pool[hashes.index(h)]), key=f"trace_{source}"
    )
    st.session_state["trace_hash"] = chosen
    return pool[hashes.index(chosen)]


def _paste_form() -> None:
    with st.sidebar.form("paste", clear_on_submit=False):
        question = st.text_area("Question", key="paste_question")
        cot = st.text_area("Reasoning and final answer", height=180, key="paste_cot")
        reference = st.text_input(
            "Reference answer (needed for any value: it decides the outcome R)", key="paste_reference"
        )
        solution = st.text_area(
            "Reference solution (optional: the rredcot estimator needs it for v̂; without it the page uses "
            "answer_only, R̂ alone)",
            key="paste_solution",
        )
        if st.form_submit_button("Add trace"):
            try:
                trace = Trace(
                    question=question,
                    cot=cot,
                    reference_answer=reference or None,
                    reference_solution=solution or None,
                    source="pasted",
                )
            except RredcotError as error:
                st.error(str(error))
                return
            resources.store().put_traces([trace], "user")
            st.session_state["trace_hash"] = st.session_state["trace_Paste"] = trace.content_hash
            st.success("Added and selected.")


def _upload_form() -> None:
    upload = upload_widget("upload", container=st.sidebar)
    if upload is None:
        return
    try:
        report = import_uploaded(upload)
    except RredcotError as error:
        st.sidebar.error(str(error))
        return
    if report.traces and st.session_state.get("uploaded") != (upload.name, len(upload.data), upload.options):
        resources.store().put_traces(report.traces, "upload")
        st.session_state["trace_hash"] = st.session_state["trace_Upload"] = report.traces[0].content_hash
        st.session_state["uploaded"] = (upload.name, len(upload.data), upload.options)
    st.sidebar.success(f"{upload.name}: {len(report.traces)} traces ({report.format}); {len(report.issues)} problems")
    for message in [*map(str, report.issues[:5]), *report.warnings]:
        st.sidebar.warning(message)


def trace_text_input(config: ModelConfig, trace: Trace) -> SegmenterInput:
    """The trace's reasoning tokens (tokenizer only, no model call), so K can be bounded by its pieces; a trace
    the tokenizer cannot take stops the page with the reason."""
    try:
        context = resources.analyzer(config, AnalysisConfig()).context(trace)
        return context.segmenter_input("reasoning", with_entropies=False)
    except RredcotError as error:
        st.error(str(error))
        st.stop()
