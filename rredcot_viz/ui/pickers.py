"""Sidebar pickers: the model, and the trace (samples, stored, pasted or uploaded). They gather choices and hand
back library objects; they compute nothing."""

from __future__ import annotations

import streamlit as st

from rredcot_viz.engine import AnalysisConfig
from rredcot_viz.errors import RredcotError
from rredcot_viz.model.backends import SamplerSpec, samplers
from rredcot_viz.model.catalogue import CATALOGUE, DEFAULT_MODEL, CatalogueModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.model.quantization import Quantization, QuantType
from rredcot_viz.segmenters import SegmenterInput
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui import resources
from rredcot_viz.ui.settings_form import settings_form
from rredcot_viz.ui.state import keep, kept, kept_index
from rredcot_viz.ui.upload import import_uploaded, outcome_choice, upload_widget

CUSTOM = "custom"


def model_picker() -> ModelConfig:
    """Sidebar model choice: the catalogue, or any HF id / model directory / GGUF path."""
    keys = [*CATALOGUE, CUSTOM]
    key = st.sidebar.selectbox(
        "Model",
        keys,
        index=kept_index("model", keys, keys.index(DEFAULT_MODEL)),
        format_func=lambda k: (
            "Other: HF id, model directory or GGUF file"
            if k == CUSTOM
            else f"{CATALOGUE[k].display_name} · {CATALOGUE[k].size_mb} MB"
        ),
        key="model",
    )
    keep("model", key)
    source = key
    if key == CUSTOM:
        source = st.sidebar.text_input(
            "Model id or path",
            value=kept("custom_model", "") if "custom_model" not in st.session_state else "",
            key="custom_model",
            placeholder="owner/name or /path/model.gguf",
        )
        keep("custom_model", source)
        if not source:
            st.sidebar.info(
                "Enter a Hugging Face id (loaded offline from the local cache), a directory or a .gguf file."
            )
            source = DEFAULT_MODEL
    else:
        st.sidebar.caption(CATALOGUE[key].reason)
    quantization, quant_type = quantization_picker(CATALOGUE.get(key))
    config = ModelConfig(source=source, quantization=quantization, quant_type=quant_type, sampler=sampler_picker())
    if samplers.get(config.sampler.backend).remote:
        sampler_check(config)
    return config


PRECISIONS = {"none": "full precision", "8bit": "8-bit", "4bit-nf4": "4-bit nf4", "4bit-fp4": "4-bit fp4"}


def quantization_picker(entry: CatalogueModel | None) -> tuple[Quantization, QuantType]:
    """The weights' precision, each option with its estimated memory when the model is a catalogue one."""

    def option(choice: str) -> str:
        if entry is None:
            return PRECISIONS[choice]
        return f"{PRECISIONS[choice]} · ~{entry.weights_mb(choice.split('-')[0]):,.0f} MB"

    choice = st.sidebar.selectbox(
        "Quantization",
        list(PRECISIONS),
        index=kept_index("quantization", list(PRECISIONS)),
        key="quantization",
        format_func=option,
        help="8-bit and 4-bit weights with bitsandbytes, on this CPU or a GPU. The memory is the weights', "
        "estimated from the parameter count (linear layers: float32 4 bytes a weight, int8 1, 4-bit about 0.52; "
        "embeddings and norms stay float32), not measured; the process needs more. Quantised scores are cached "
        "apart from full precision's; what they cost in fidelity: docs/BENCHES.md (bench/quantization.py).",
    )
    quantization, _, quant_type = keep("quantization", choice).partition("-")
    return quantization, quant_type or ModelConfig.quant_type


def sampler_picker() -> SamplerSpec:
    """Where rollouts (Monte Carlo, resets, sampling detectors) are drawn: this model, or a server such as vLLM."""
    name = st.sidebar.selectbox(
        "Rollouts from",
        samplers.names(),
        index=kept_index("sampler", samplers.names()),
        key="sampler",
        format_func=lambda n: f"an inference server ({n})" if samplers.get(n).remote else f"this model ({n})",
        help="An OpenAI-compatible server (vLLM: `scripts/dev engine`) serving the same weights; it is checked "
        "against the loaded model first (vLLM on a CPU drew Monte Carlo rollouts about twice as fast as this "
        "model here, bench/sampling.py; a GPU server far faster). Training always samples its own policy.",
    )
    keep("sampler", name)
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
            "The embedded SmolLM2-135M solves some grade-school problems, but its RREDCoT credit does not order "
            "segments as Monte Carlo does (0.519 of MC's pairs against controls up to 0.531), so read its "
            "estimates as a demonstration of the pipeline. Qwen2.5-Coder-1.5B "
            "(`python -m rredcot_viz fetch-model qwen2.5-coder-1.5b`) is the offline model whose answer "
            "probability can rise before the answer is written, though its RREDCoT credit does not order segments as "
            "Monte Carlo does either (0.475 of MC's pairs on 16 of its traces).",
            icon="ℹ️",
        )


def trace_labels(pool: list[Trace]) -> dict[str, str]:
    """A unique menu label per trace, by content hash: its name and outcome, and where two traces would read
    the same (several answers to one question), the start of their hash. Streamlit's selectbox sends the
    chosen *label* back and maps it to the last option showing it, so equal labels would switch the page to
    another trace by itself."""
    outcome = {1.0: "correct", 0.0: "failed"}
    plain = {t.content_hash: f"{t.display_name} · {outcome.get(t.outcome, 'outcome unknown')}" for t in pool}
    seen: dict[str, int] = {}
    for label in plain.values():
        seen[label] = seen.get(label, 0) + 1
    return {h: label if seen[label] == 1 else f"{label} · #{h[:8]}" for h, label in plain.items()}


def trace_picker(only_failed: bool = False) -> Trace | None:
    """Sidebar trace choice from the samples, the store, pasted text or an uploaded file (the paste form and the
    upload, with what they report, in the main pane). None when there is nothing to show (with the reason)."""
    store = resources.store()
    samples = resources.samples()
    sources = ["Samples", "Stored", "Paste", "Upload"]
    index = kept_index("trace_source", sources)
    source = keep("trace_source", st.sidebar.radio("Trace source", sources, index, horizontal=True, key="trace_source"))
    if source == "Paste":
        _paste_form()
    elif source == "Upload" and not _upload_form():
        return None
    if source == "Samples":
        pool = samples
    else:
        collection = None
        collections = store.collections()
        if source == "Stored" and collections:
            collection = st.sidebar.selectbox(
                "Collection",
                list(collections),
                kept_index("collection", list(collections)),
                key="collection",
                format_func=lambda c: f"{c} ({collections[c]})",
            )
            keep("collection", collection)
        pool = (
            store.traces(collection, limit=2000)
            if source == "Stored"
            else store.traces("user" if source == "Paste" else "upload")
        )
    if only_failed:
        pool = [t for t in pool if t.outcome == 0.0]
    by_hash = {t.content_hash: t for t in pool}  # a trace stored twice is one choice
    if not by_hash:
        message = {
            "Paste": "No pasted trace yet: fill in the form above.",
            "Upload": "No uploaded trace yet: choose a file above.",
        }.get(source, "No traces here yet: paste one or upload a file.")
        if only_failed:
            message = "No failed traces here: pick another source or collection."
        st.info(message)
        return None
    labels = trace_labels(list(by_hash.values()))
    key = f"trace_{source}"
    current = st.session_state.get(key)
    if current not in by_hash:  # first visit, or the chosen one left the pool: start from the app's current
        wanted = st.session_state.get("trace_hash")  # trace (set here, by a link or by "Open in Inspect")
        current = wanted if wanted in by_hash else next(iter(by_hash))
    st.session_state[key] = current  # set through the state, so another page's picker starts on it too
    chosen = st.sidebar.selectbox("Trace", list(by_hash), format_func=lambda h: labels.get(h, str(h)), key=key)
    st.session_state["trace_hash"] = chosen
    return by_hash[chosen]


def _paste_form() -> None:
    """The paste form in the main pane (open until a trace was pasted), with its outcome beside it."""
    pasted = bool(resources.store().traces("user", limit=1))
    with (
        st.expander("Paste a trace", expanded=not pasted),
        st.form("paste", clear_on_submit=False, enter_to_submit=False),
    ):
        question = st.text_area("Question", key="paste_question")
        cot = st.text_area("Reasoning and final answer", height=180, key="paste_cot")
        reference = st.text_input(
            "Reference answer (optional: the trace's answer is checked against it for the outcome R)",
            key="paste_reference",
        )
        correct = outcome_choice("Correct or wrong (optional: the outcome R as a label)", "paste_outcome")
        solution = st.text_area(
            "Reference solution (optional: the rredcot estimator needs it for v̂; without it the page uses "
            "answer_only, R̂ alone)",
            key="paste_solution",
        )
        st.caption("With none of these the heatmap is credit toward the trace's own final answer (own_answer).")
        if st.form_submit_button("Add trace"):
            try:
                trace = Trace(
                    question=question,
                    cot=cot,
                    reference_answer=reference or None,
                    reference_solution=solution or None,
                    correct=correct,
                    source="pasted",
                )
            except RredcotError as error:
                st.error(str(error))
                return
            resources.store().put_traces([trace], "user")
            st.session_state["trace_hash"] = st.session_state["trace_Paste"] = trace.content_hash
            st.success("Added and selected.")


def _upload_form() -> bool:
    """The upload in the main pane; False when the file was rejected (the reason shown there, and no other
    trace in its place)."""
    uploaded = bool(resources.store().traces("upload", limit=1))
    with st.expander("Upload a file", expanded=not uploaded):
        upload = upload_widget("upload")
        if upload is None:
            return True
        try:
            report = import_uploaded(upload)
        except RredcotError as error:
            st.error(str(error))
            return False
        if report.traces and st.session_state.get("uploaded") != (upload.name, len(upload.data), upload.options):
            resources.store().put_traces(report.traces, "upload")
            st.session_state["trace_hash"] = st.session_state["trace_Upload"] = report.traces[0].content_hash
            st.session_state["uploaded"] = (upload.name, len(upload.data), upload.options)
        st.success(f"{upload.name}: {len(report.traces)} traces ({report.format}); {len(report.issues)} problems")
        for message in [*map(str, report.issues[:5]), *report.warnings]:
            st.warning(message)
    if not report.traces:
        st.error(f"{upload.name} holds no trace this app can read; see the problems above.")
        return False
    return True


def trace_text_input(config: ModelConfig, trace: Trace) -> SegmenterInput:
    """The trace's reasoning tokens (tokenizer only, no model call), so K can be bounded by its pieces; a trace
    the tokenizer cannot take stops the page with the reason."""
    try:
        context = resources.analyzer(config, AnalysisConfig()).context(trace)
        return context.segmenter_input("reasoning", with_entropies=False)
    except RredcotError as error:
        st.error(str(error))
        st.stop()
