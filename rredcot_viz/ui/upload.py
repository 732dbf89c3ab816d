"""The one upload widget: a file, the format to read it as, a field mapping and the text encoding.

Every message names the user's file (never the server's temporary copy), and a file the importers cannot read
becomes a message, never a traceback.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.traces.importers import ImportReport, import_file, importers
from rredcot_viz.traces.importers.base import LABEL_BASES
from rredcot_viz.traces.importers.fields import MAPPABLE_FIELDS, parse_field_map
from rredcot_viz.traces.importers.readers import DATA_SUFFIXES

MAX_UPLOAD_MB = float(os.environ.get("RREDCOT_MAX_UPLOAD_MB", "20"))
ENCODINGS = ["utf-8", "latin-1", "cp1252", "utf-16"]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReadOptions:
    """How to read an uploaded file (the upload's counterpart of ``--format``, ``--map``, ``--encoding``,
    ``--label-base``), and the reference answer and correct/wrong label for records that have none."""

    format: str = "auto"
    field_map: dict[str, str] = field(default_factory=dict)
    encoding: str = "utf-8"
    label_base: int = 0
    reference_answer: str | None = None
    correct: bool | None = None


@dataclass(frozen=True)
class Upload:
    name: str
    data: bytes
    options: ReadOptions


def upload_widget(
    key: str, label: str = "a file in any supported format (JSON, JSONL, parquet, Arrow, CSV, TSV)", container=st
) -> Upload | None:
    """A file uploader with the reading options beside it; None until a file is given (or when it is too big
    or the mapping is malformed, with the reason shown)."""
    upload = container.file_uploader(label, type=[*(suffix.lstrip(".") for suffix in DATA_SUFFIXES), "gz"], key=key)
    left, right = container.columns(2)
    reference = left.text_input("Reference answer for records without one (optional)", key=f"{key}_reference")
    correct = outcome_choice("Correct or wrong, for records without an outcome (optional)", f"{key}_outcome", right)
    with container.expander("Format, field names, encoding"):
        fmt = st.selectbox(
            "Format",
            ["auto", *importers.names()],
            key=f"{key}_format",
            help="auto: detected from the first record; `plain` reads common field names "
            "(question/problem/prompt + trace/response/output/completion/steps + answer/gt_answer/solution)",
        )
        mapping_text = st.text_input(
            "Field mapping (THEIRS=OURS, comma separated)",
            key=f"{key}_map",
            placeholder="q=question, model_response=cot",
            help=f"our fields: {', '.join(MAPPABLE_FIELDS)}",
        )
        encoding = st.selectbox("Text encoding", ENCODINGS, key=f"{key}_encoding")
        label_base = st.selectbox(
            "First-error labels count steps from",
            LABEL_BASES,
            key=f"{key}_label_base",
            help="0: the first step is step 0 (ours, ProcessBench); 1: the file numbers steps from 1 (-1 stays "
            "'no error'). A file whose labels look 1-based gets a warning.",
        )
    if upload is None:
        return None
    if upload.size > MAX_UPLOAD_MB * 1024 * 1024:
        container.error(
            f"{upload.name} is {upload.size / 1e6:.1f} MB; the upload limit is {MAX_UPLOAD_MB:g} MB. Import large "
            "files with `python -m rredcot_viz import FILE --out traces.jsonl`, or raise RREDCOT_MAX_UPLOAD_MB."
        )
        return None
    try:
        field_map = parse_field_map(mapping_text)
    except RredcotError as error:
        container.error(str(error))
        return None
    options = ReadOptions(fmt, field_map, encoding, label_base, reference.strip() or None, correct)
    return Upload(upload.name, upload.getvalue(), options)


def outcome_choice(label: str, key: str, container=st) -> bool | None:
    """An optional correct/wrong label: None (unknown), True or False."""
    names = {None: "unknown", True: "correct", False: "wrong"}
    return container.radio(label, list(names), format_func=names.get, horizontal=True, key=key)


def import_uploaded(upload: Upload, limit: int | None = None) -> ImportReport:
    """Parse (never execute) an uploaded file with the importers; raises ``RredcotError`` naming the user's
    file for anything it cannot read."""
    name = Path(upload.name).name
    lower = name.lower()  # parquet, Arrow and CSV are read by their suffix; JSON by its bytes (gzip included)
    suffix = next((s for s in DATA_SUFFIXES if lower.endswith(s) and s not in (".json", ".jsonl")), ".upload")
    with tempfile.NamedTemporaryFile(suffix=suffix, delete=False) as handle:
        handle.write(upload.data)
    try:
        report = import_file(
            handle.name,
            upload.options.format,
            limit,
            field_map=upload.options.field_map,
            encoding=upload.options.encoding,
            label_base=upload.options.label_base,
            display_name=name,
        )
    except RredcotError:
        raise
    except Exception as error:  # an importer bug must still not show the user a traceback with server paths
        log.exception("import of upload %s failed", name)
        raise RredcotError(f"{name} could not be read ({type(error).__name__}); please report this file") from None
    finally:
        os.unlink(handle.name)
    report.traces = [t.with_defaults(upload.options.reference_answer, upload.options.correct) for t in report.traces]
    return report
