"""The data commands (cli/data_commands.py): ``import`` with its report and ``export`` from the store."""

from __future__ import annotations

import json

import pytest

from rredcot_viz.cli import main
from rredcot_viz.paths import SAMPLE_TRACES_DIR


def test_import_summarises_and_writes_our_jsonl(tmp_path, capsys):
    out = tmp_path / "traces.jsonl"
    assert main(["import", str(SAMPLE_TRACES_DIR / "arithmetic.jsonl"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "format                   native" in text and "records_failed           0" in text
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == 7 and all(record["schema"] == "rredcot.trace/1" for record in written)


def test_import_reports_bad_lines_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    good = {"question": "What is 1 + 1?", "cot": "1 + 1 = 2. The answer is \\boxed{2}.", "reference_answer": "2"}
    bad.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({"question": "q"}) + "\n")
    assert main(["import", str(bad)]) == 0
    text = capsys.readouterr().out
    assert "records_read             3" in text and "records_failed           2" in text
    assert "bad.jsonl:line 2: invalid JSON" in text
    assert "bad.jsonl:line 3: native: missing required trace fields ['cot']" in text


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    assert main(["import", str(tmp_path / "nope.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_export_from_the_store(tmp_path, capsys, monkeypatch):
    from rredcot_viz.store import Store
    from rredcot_viz.traces.io import sample_traces

    path = tmp_path / "s.duckdb"
    monkeypatch.setenv("RREDCOT_STORE", str(path))  # restored afterwards; --store sets it for the run
    store = Store(path)
    store.put_traces(sample_traces()[:2], "samples")
    store.close()
    out = tmp_path / "traces.csv"
    assert main(["--store", str(path), "export", "SELECT trace_id FROM traces ORDER BY trace_id", str(out)]) == 0
    assert out.read_text().splitlines() == ["trace_id", "sample-bakery-correct", "sample-bakery-failed"]
    assert main(["--store", str(path), "export", "nope", str(out)]) == 2
    assert "neither a table" in capsys.readouterr().err


def test_import_of_a_small_file_loads_no_ml_stack(tmp_path):
    """Reading a file must not import torch or transformers (2 s of CPU before; docs/BENCHES.md: cli_startup)."""
    import subprocess
    import sys

    source = tmp_path / "tiny.jsonl"
    source.write_text(json.dumps({"question": "What is 1 + 1?", "cot": "1 + 1 = 2.", "reference_answer": "2"}) + "\n")
    code = (
        "import sys; from rredcot_viz.cli import main\n"
        f"assert main(['import', {str(source)!r}, '--out', {str(tmp_path / 'x.jsonl')!r}]) == 0\n"
        "print(sorted(m for m in ('torch', 'transformers', 'pandas', 'streamlit') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_failed_import_out_keeps_the_existing_file(tmp_path, monkeypatch):
    """`import ... --out EXISTING.jsonl` used to truncate the file to 0 bytes before a crash part-way through."""
    from rredcot_viz.traces.trace import Trace

    existing = tmp_path / "EXISTING.jsonl"
    existing.write_bytes(b"the user's earlier export\n")
    written = []
    original = Trace.to_dict

    def crash_on_the_third(self):
        written.append(self)
        if len(written) == 3:
            raise RuntimeError("disk full")
        return original(self)

    monkeypatch.setattr(Trace, "to_dict", crash_on_the_third)
    with pytest.raises(RuntimeError, match="disk full"):
        main(["import", str(SAMPLE_TRACES_DIR / "arithmetic.jsonl"), "--out", str(existing)])
    assert existing.read_bytes() == b"the user's earlier export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["EXISTING.jsonl"]
