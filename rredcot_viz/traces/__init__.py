"""Traces: the data model, answer extraction and checking, importers, sample traces."""

from rredcot_viz.traces.answers import answers_equivalent, extract_answer, normalize_answer, parse_number
from rredcot_viz.traces.importers import ImportReport, import_file, importers
from rredcot_viz.traces.io import read_jsonl, sample_traces, write_jsonl
from rredcot_viz.traces.trace import Trace

__all__ = [
    "ImportReport",
    "Trace",
    "answers_equivalent",
    "extract_answer",
    "import_file",
    "importers",
    "normalize_answer",
    "parse_number",
    "read_jsonl",
    "sample_traces",
    "write_jsonl",
]
