"""Widgets shared by the pages: model and trace pickers, segmentation and estimator controls.

They only gather choices and hand back library objects; they compute nothing.
"""

from __future__ import annotations

import streamlit as st
import torch

from rredcot_viz.engine import AnalysisConfig
from rredcot_viz.errors import MissingReferenceError, RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.aggregation import CANDIDATE_NORMALIZED, aggregations
from rredcot_viz.estimators.redistribution import VARIANTS
from rredcot_viz.jobs import Job
from rredcot_viz.model.catalogue import CATALOGUE, DEFAULT_MODEL
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.segmenters import SegmenterInput, segmenters
from rredcot_viz.segmenters.hybrid import HybridSegmenterConfig
from rredcot_viz.traces.needs import describe
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui import resources
from rredcot_viz.ui.upload import import_uploaded, upload_widget

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
    for issue in report.issues[:5]:
        st.sidebar.warning(str(issue))


def trace_text_input(config: ModelConfig, trace: Trace) -> SegmenterInput:
    """The trace's reasoning tokens (tokenizer only, no model call), so K can be bounded by its pieces; a trace
    the tokenizer cannot take stops the page with the reason."""
    try:
        context = resources.analyzer(config, AnalysisConfig()).context(trace)
        return context.segmenter_input("reasoning", with_entropies=False)
    except RredcotError as error:
        st.error(str(error))
        st.stop()


COMMON_DELIMITERS = ("</thought>", " ки", "\n\n", "\n", ". ")  # tried in order for the delimiter default


def _follow_default(key: str, default: object) -> None:
    """Let an untouched widget follow a default that depends on the trace; a value the user chose stays."""
    marker = f"{key}__default"
    if key not in st.session_state or st.session_state[key] == st.session_state.get(marker):
        st.session_state[key] = default
    st.session_state[marker] = default


def segmentation_controls(prefix: str, trace: Trace, default: str = "hybrid", text_input: SegmenterInput | None = None):
    """Segmenter, K and merge score; returns the configured segmenter.

    Defaults come from the segmenter's config; with ``text_input`` (the trace's tokens, no model call) K never
    exceeds the trace's keyword/newline pieces and the delimiter default is one the trace contains."""
    names = segmenters.names() if trace.steps is not None else [n for n in segmenters.names() if n != "given"]
    col_seg, col_k, col_merge = st.columns([2, 3, 1])
    name = col_seg.selectbox(
        "Segmenter",
        names,
        index=names.index(default) if default in names else 0,
        key=f"{prefix}_segmenter",
        help="\n".join(f"{k}: {v}" for k, v in SEGMENTER_HELP.items()),
    )
    options: dict[str, object] = {}
    config = segmenters.get(name).Config()
    if name in ("hybrid", "fixed_tokens", "adaptive_entropy"):
        configured_k = config.k or HybridSegmenterConfig().k
        pieces = None
        if name == "hybrid" and text_input is not None:
            pieces = len(segmenters.get("hybrid")(k=None).candidate_cuts(text_input)) + 1
        if pieces is not None and pieces <= 2:
            options["k"] = pieces
            col_k.caption(f"This trace has {pieces} keyword/newline piece(s): K = {pieces}.")
        else:
            top = pieces if pieces is not None else 32
            key = f"{prefix}_k"
            _follow_default(key, min(configured_k, top))
            st.session_state[key] = min(max(st.session_state[key], 2), top)
            label = f"K (target segments, at most {pieces} pieces here)" if pieces else "K (target segments)"
            options["k"] = col_k.slider(label, 2, max(top, 3), key=key)
    if name == "hybrid":
        options["merge_score"] = col_merge.radio("Merge score", ["sum", "boundary"], key=f"{prefix}_merge")
    if name == "delimiter":
        key = f"{prefix}_delimiter"
        found = [d for d in (config.delimiter, *COMMON_DELIMITERS) if d in trace.cot]
        _follow_default(key, (found[0] if found else config.delimiter).encode("unicode_escape").decode())
        typed = col_k.text_input("Delimiter (\\n = newline)", key=key)
        options["delimiter"] = typed.encode().decode("unicode_escape") if typed else config.delimiter
    return segmenters.get(name)(**options)


def variant_control(prefix: str, column=st) -> AnalysisConfig:
    variant = column.selectbox(
        "Redistribution",
        VARIANTS[:2],
        key=f"{prefix}_variant",
        help="exact_sum: sum(sigma) = R exactly; difference: sum(sigma) = R - Q-hat_1",
    )
    return AnalysisConfig(boundaries="segmenter", variant=variant)


def usable_estimator(name: str, trace: Trace, fallback: str = "answer_only") -> tuple[str, str | None]:
    """``name`` if it can run on ``trace``, else ``fallback`` with a note saying what was missing and why."""
    try:
        estimators.get(name)().check(trace)
        return name, None
    except MissingReferenceError as error:
        try:
            estimators.get(fallback)().check(trace)
        except MissingReferenceError:
            return name, None  # nothing to fall back to: the analysis reports what is missing
        return fallback, f"Using {fallback} instead of {name}: {error}"


def estimator_controls(prefix: str, names: list[str] | None = None):
    """Estimator, aggregation and redistribution variant; returns (estimator, AnalysisConfig)."""
    names = names or ["rredcot", "answer_only", "own_answer", "continue_only", "uniform"]
    col_est, col_agg, col_var = st.columns(3)
    name = col_est.selectbox(
        "Estimator",
        names,
        key=f"{prefix}_estimator",
        help="\n".join(f"{n} needs {describe(estimators.get(n).needs) or 'nothing but the text'}" for n in names),
    )
    options = {}
    if name in ("rredcot", "answer_only", "own_answer", "continue_only"):
        choices = [*aggregations.names(), CANDIDATE_NORMALIZED]
        options["aggregation"] = col_agg.selectbox("Aggregation", choices, key=f"{prefix}_aggregation")
    variant = col_var.selectbox(
        "Redistribution",
        VARIANTS[:2],
        key=f"{prefix}_variant",
        help="exact_sum: sum(sigma) = R exactly; difference: sum(sigma) = R - Q-hat_1",
    )
    return estimators.get(name)(**options), AnalysisConfig(boundaries="segmenter", variant=variant)


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


def jobs_panel(limit: int = 8) -> None:
    """Every tab's view of the store's jobs: running ones with progress and a cancel button, then finished."""
    manager = resources.jobs()
    listed = manager.jobs(limit=limit)
    if not listed:
        return
    running = [job for job in listed if job.active]

    @st.fragment(run_every=2.0 if running else None)
    def panel() -> None:
        with st.sidebar.expander(f"Jobs ({len(running)} running)", expanded=bool(running)):
            for job in manager.jobs(limit=limit):
                cost = job.cost
                spent = f" · {int(cost.get('tokens_processed', 0) + cost.get('tokens_generated', 0))} tokens"
                if job.active:
                    st.progress(
                        job.fraction, text=f"{job.label}: {job.done}/{job.total} {job.unit}, {job.elapsed:.0f} s{spent}"
                    )
                    if st.button("Cancel", key=f"jobs_cancel_{job.id}") and not manager.cancel(job.id):
                        st.info("That job does not run in this app process.")
                else:
                    st.caption(f"{job.label}: {job.status} after {job.elapsed:.0f} s{spent}")

    panel()
