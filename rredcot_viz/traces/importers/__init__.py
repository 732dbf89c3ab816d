"""Dataset importers, one file per source format, registered by name in ``importers``."""

from rredcot_viz.traces.importers import (
    gsm8k,  # noqa: F401  (registers the importer)
    gsm8k_solutions,  # noqa: F401  (registers the importer)
    math,  # noqa: F401  (registers the importer)
    math_shepherd,  # noqa: F401  (registers the importer)
    native,  # noqa: F401  (registers the importer)
    plain,  # noqa: F401  (registers the importer; the fallback format)
    prm800k,  # noqa: F401  (registers the importer)
    processbench,  # noqa: F401  (registers the importer)
    qwen_rm,  # noqa: F401  (registers the importer)
    thought_anchors,  # noqa: F401  (registers the importer)
    trl_completions,  # noqa: F401  (registers the importer)
    verl_rollouts,  # noqa: F401  (registers the importer)
)
from rredcot_viz.traces.importers.base import (
    Importer,
    ImportIssue,
    ImportReport,
    detect_format,
    import_file,
    importers,
)
from rredcot_viz.traces.importers.json_records import read_records

__all__ = ["ImportIssue", "ImportReport", "Importer", "detect_format", "import_file", "importers", "read_records"]
