"""The data commands (cli/data_commands.py): ``import`` with its report and ``export`` from the store."""

from __future__ import annotations

import json

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
