"""Widgets shared by the pages: model and trace pickers, segmentation and estimator controls.

They only gather choices and hand back library objects; they compute nothing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import streamlit as st
import torch

from rredcot_viz.engine import AnalysisConfig
from rredcot_viz.errors import RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.aggregation import CANDIDATE_NORMALIZED, aggregations
from rredcot_viz.estimators.redistribution import VARIANTS
from rredcot_viz.jobs import Job
from rredcot_viz.model.catalogue import CATALOGUE, DEFAULT_MODEL
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui import resources

MAX_UPLOAD_MB = float(os.environ.get("RREDCOT_MAX_UPLOAD_MB", "20"))
CUSTOM = "custom"
SEGMENTER_HELP = {
    "hybrid": "keyword/newline pieces merged by lowest entropy down to K (RREDCoT's default)",
    "keyword": "cut at newlines and before discourse markers (Wait, So, But, ...)",
    "line": "cut after every newline",
    "paragraph": "cut after blank lines",
    "sentence": "Thought Anchors' sentence chunker",
    "fixed_tokens": "every N tokens (N = tokens / K)",
    "adaptive_entropy": "cut at entropy peaks: finer where the model is unsure",
    "delimiter": "cut after a delimiter such as </thought>",
    "given": "the trace's own pre-split steps (ProcessBench, Thought Anchors)",
}


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
    quantization = "none"
    if torch.cuda.is_available():
        quantization = st.sidebar.radio("Quantization", ["none", "8bit", "4bit"], horizontal=True, key="quantization")
    else:
        st.sidebar.caption("8-bit / 4-bit quantization needs a CUDA GPU; this machine runs full precision on the CPU.")
    return ModelConfig(source=source, quantization=quantization)


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
        reference = st.text_input("Reference answer", key="paste_reference")
        solution = st.text_area("Reference solution (for v-hat, optional)", key="paste_solution")
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
    upload = st.sidebar.file_uploader("JSON / JSONL in any supported format", type=["json", "jsonl"], key="upload")
    if upload is None:
        return
    if upload.size > MAX_UPLOAD_MB * 1024 * 1024:
        st.sidebar.error(
            f"{upload.name} is {upload.size / 1e6:.1f} MB; the upload limit is {MAX_UPLOAD_MB:g} MB. Import large "
            "files with `python -m rredcot_viz import FILE --out traces.jsonl`, or raise RREDCOT_MAX_UPLOAD_MB."
        )
        return
    report = import_uploaded(upload.name, upload.getvalue())
    if report is None:
        return
    if report.traces and st.session_state.get("uploaded") != (upload.name, upload.size):
        resources.store().put_traces(report.traces, "upload")
        st.session_state["trace_hash"] = st.session_state["trace_Upload"] = report.traces[0].content_hash
        st.session_state["uploaded"] = (upload.name, upload.size)
    st.sidebar.success(f"{upload.name}: {len(report.traces)} traces ({report.format}); {len(report.issues)} problems")
    for issue in report.issues[:5]:
        st.sidebar.warning(str(issue))


def import_uploaded(name: str, data: bytes):
    """Parse (never execute) an uploaded file with the importers; errors become messages."""
    suffix = Path(name).suffix if Path(name).suffix in (".json", ".jsonl") else ".jsonl"
    with tempfile.NamedTemporaryFile(suffix=suffix, delete=False) as handle:
        handle.write(data)
    try:
        return import_file(handle.name)
    except RredcotError as error:
        st.sidebar.error(f"{name}: {error}")
        return None
    finally:
        os.unlink(handle.name)


def segmentation_controls(prefix: str, trace: Trace, default: str = "hybrid"):
    """Segmenter, K and merge score; returns the configured segmenter."""
    names = segmenters.names() if trace.steps is not None else [n for n in segmenters.names() if n != "given"]
    col_seg, col_k, col_merge = st.columns([2, 3, 1])
    name = col_seg.selectbox(
        "Segmenter",
        names,
        index=names.index(default) if default in names else 0,
        key=f"{prefix}_segmenter",
        help="\n".join(f"{k}: {v}" for k, v in SEGMENTER_HELP.items()),
    )
    options = {}
    if name in ("hybrid", "fixed_tokens", "adaptive_entropy"):
        options["k"] = col_k.slider("K (target segments)", 2, 32, 8, key=f"{prefix}_k")
    if name == "hybrid":
        options["merge_score"] = col_merge.radio("Merge score", ["sum", "boundary"], key=f"{prefix}_merge")
    if name == "delimiter":
        options["delimiter"] = col_k.text_input("Delimiter", "</thought>", key=f"{prefix}_delimiter")
    return segmenters.get(name)(**options)


def variant_control(prefix: str, column=st) -> AnalysisConfig:
    variant = column.selectbox(
        "Redistribution",
        VARIANTS[:2],
        key=f"{prefix}_variant",
        help="exact_sum: sum(sigma) = R exactly; difference: sum(sigma) = R - Q-hat_1",
    )
    return AnalysisConfig(boundaries="all", variant=variant)


def estimator_controls(prefix: str, names: list[str] | None = None):
    """Estimator, aggregation and redistribution variant; returns (estimator, AnalysisConfig)."""
    names = names or ["rredcot", "answer_only", "continue_only", "uniform"]
    col_est, col_agg, col_var = st.columns(3)
    name = col_est.selectbox("Estimator", names, key=f"{prefix}_estimator")
    options = {}
    if name in ("rredcot", "answer_only", "continue_only"):
        choices = [*aggregations.names(), CANDIDATE_NORMALIZED]
        options["aggregation"] = col_agg.selectbox("Aggregation", choices, key=f"{prefix}_aggregation")
    variant = col_var.selectbox(
        "Redistribution",
        VARIANTS[:2],
        key=f"{prefix}_variant",
        help="exact_sum: sum(sigma) = R exactly; difference: sum(sigma) = R - Q-hat_1",
    )
    return estimators.get(name)(**options), AnalysisConfig(boundaries="all", variant=variant)


def job_status(
    job: Job,
    key: str,
    progress_text: str,
    *,
    cancel_label: str = "Cancel",
    cancel_note: str | None = None,
    cancelled: str | None = None,
    done: str | None = None,
) -> bool:
    """A background job's progress bar and cancel button while it runs, its outcome once it has ended.
    Returns True on the one render where the caller first sees it ended (to rerun the app for its results)."""
    if job.active:
        left, right = st.columns([4, 1])
        left.progress(job.fraction, text=progress_text)
        if right.button(cancel_label, key=f"{key}_cancel"):
            job.cancel()
            if cancel_note:
                st.info(cancel_note)
        return False
    if job.status == "failed":
        st.error(job.error)
    elif job.status == "cancelled":
        st.warning(cancelled or f"Cancelled after {job.elapsed:.0f} s.")
    elif done:
        st.success(done)
    first_seen = st.session_state.get(f"{key}_seen") != job.id
    st.session_state[f"{key}_seen"] = job.id
    return first_seen


class StreamlitProgress:
    """A progress bar for a library call reporting ``progress(done, total)``."""

    def __init__(self, label: str):
        self.bar = st.progress(0.0, text=label)
        self.label = label

    def __call__(self, done: int, total: int) -> None:
        self.bar.progress(min(done / max(total, 1), 1.0), text=f"{self.label} ({done}/{total})")

    def close(self) -> None:
        self.bar.empty()
