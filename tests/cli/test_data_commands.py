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


def stored_samples(tmp_path, monkeypatch) -> str:
    """A store file holding 7 sample traces, named by $RREDCOT_STORE as --store would."""
    from rredcot_viz.store import Store
    from rredcot_viz.traces.io import sample_traces

    path = tmp_path / "s.duckdb"
    monkeypatch.setenv("RREDCOT_STORE", str(path))
    store = Store(path)
    store.put_traces(sample_traces()[:7], "samples")
    store.close()
    return str(path)


def error_line(capsys) -> str:
    """The one line a refused command prints (on stderr, never a traceback)."""
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out and len(captured.err.splitlines()) == 1, captured.err
    return captured.err


def test_export_runs_no_statement_hidden_in_its_query(tmp_path, capsys, monkeypatch):
    """This query, pasted into COPY (...), exited 0 having deleted every trace in the store."""
    from rredcot_viz.store import Store

    store = stored_samples(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    planted = "SELECT 1) TO 'x.csv' (FORMAT csv); DELETE FROM traces; COPY (SELECT 1"
    assert main(["--store", store, "export", planted, str(tmp_path / "out.csv")]) == 2
    assert "nor a SELECT query: Parser Error: syntax error" in error_line(capsys)
    assert main(["--store", store, "export", "DELETE FROM traces", str(tmp_path / "out.csv")]) == 2
    assert "exactly one SELECT query, which it only reads" in error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb"]  # neither out.csv nor the planted x.csv
    assert len(Store(store).traces("samples")) == 7


def test_export_of_a_query_duckdb_rejects_is_one_message(tmp_path, capsys, monkeypatch):
    """Catalog, parser and binder errors came out of COPY as tracebacks with rc 1."""
    store = stored_samples(tmp_path, monkeypatch)
    rejected = {
        "SELECT * FROM nowhere": "Catalog Error: Table with name nowhere does not exist",
        "SELECT nope FROM traces": 'Binder Error: Referenced column "nope" not found in FROM clause',
        "SELECT FROM WHERE": "Parser Error: syntax error",
    }
    for query, reason in rejected.items():
        assert main(["--store", store, "export", query, str(tmp_path / "out.csv")]) == 2
        assert reason in error_line(capsys)


def test_out_where_no_file_can_be_created_is_one_message(tmp_path, capsys, monkeypatch):
    """/proc and /sys pass the permission checks as root, then the write raised FileNotFoundError or DuckDB's
    IOException."""
    store = stored_samples(tmp_path, monkeypatch)
    source = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    for command in (["import", source, "--out", "/proc/x.jsonl"], ["--store", store, "export", "traces", "/sys/x.csv"]):
        assert main(command) == 2
        assert "no file can be created in /" in error_line(capsys)


def test_out_that_is_not_a_regular_file_is_refused(tmp_path, capsys, monkeypatch):
    """A FIFO given as --out was replaced by a regular file; a symlink is written through and stays a link."""
    import os
    import stat

    store = stored_samples(tmp_path, monkeypatch)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    source = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    for command in (["import", source, "--out", str(fifo)], ["--store", store, "export", "traces", str(fifo)]):
        assert main(command) == 2
        assert "is a named pipe (FIFO); rredcot_viz writes only regular files" in error_line(capsys)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old\n")
    real.chmod(0o600)
    link.symlink_to(real)
    assert main(["--store", store, "export", "SELECT count(*) AS n FROM traces", str(link)]) == 0
    assert link.is_symlink() and real.read_text() == "n\n7\n" and stat.S_IMODE(real.stat().st_mode) == 0o600


def test_a_damaged_store_is_one_message(tmp_path, capsys, monkeypatch):
    """A store cut to half its size, or with tables but no schema version, raised DuckDB's exceptions."""
    import duckdb

    from rredcot_viz.store import Store

    big = tmp_path / "big.duckdb"
    monkeypatch.setenv("RREDCOT_STORE", str(big))  # --store sets it for the process: restored afterwards
    store = Store(big)
    with store.cursor() as cur:
        cur.execute(
            "INSERT INTO traces SELECT md5(i::VARCHAR), 't' || i, 'test', repeat('question ', 40), 1, 900, "
            "json_object('cot', repeat('step ' || i || '. ', 90)), 'big', 0 FROM range(3000) AS r(i)"
        )
    store.close()
    cut = tmp_path / "cut.duckdb"
    cut.write_bytes(big.read_bytes()[: big.stat().st_size // 2])
    foreign = tmp_path / "foreign.duckdb"
    duckdb.connect(str(foreign)).execute("CREATE TABLE traces (a INTEGER)").close()
    source = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    for path, reason in [(cut, "is damaged"), (foreign, "has tables (traces) but no schema version")]:
        for command in (["export", "traces", str(tmp_path / "out.csv")], ["import", source, "--collection", "x"]):
            capsys.readouterr()
            assert main(["--store", str(path), *command]) == 2
            assert f"error: the store {path} {reason}" in error_line(capsys)


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """`import ... | head -5` ended in a BrokenPipeError traceback; now nothing is printed and rc is SIGPIPE's."""
    import subprocess
    import sys

    many = tmp_path / "many.jsonl"
    good = {"question": "What is 1 + 1?", "cot": "1 + 1 = 2.", "reference_answer": "2"}
    many.write_text(json.dumps(good) + "\n" + '{"question": "no cot"}\n' * 5000)  # 5000 problem lines: > a pipe
    command = [sys.executable, "-m", "rredcot_viz", "import", str(many), "--show-issues", "5000"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().startswith("file ")
    process.stdout.close()  # the reader is gone, as head is after 5 lines
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == ""


def test_import_into_a_second_collection_puts_the_traces_there_too(tmp_path, capsys, monkeypatch):
    """``import --collection B`` of traces already in A printed "stored 7 traces in collection B" and B had none."""
    from rredcot_viz.store import Store

    path = tmp_path / "s.duckdb"
    monkeypatch.setenv("RREDCOT_STORE", str(path))
    source = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    assert main(["--store", str(path), "import", source, "--collection", "A"]) == 0
    assert f"7 traces in collection A: 7 new, 0 already stored; store {path}" in capsys.readouterr().out
    assert main(["--store", str(path), "import", source, "--collection", "B"]) == 0
    out = capsys.readouterr().out
    assert "7 traces in collection B: 0 new, 7 already stored (7 added to this collection, 0 already in it)" in out
    renamed = tmp_path / "renamed.jsonl"
    records = [json.loads(line) for line in (SAMPLE_TRACES_DIR / "arithmetic.jsonl").read_text().splitlines()]
    renamed.write_text(json.dumps({**records[0], "trace_id": "renamed-0"}) + "\n")
    assert main(["--store", str(path), "import", str(renamed), "--collection", "C"]) == 0
    store = Store(path)
    assert store.collections() == {"A": 7, "B": 7, "C": 1}
    assert (
        [t.trace_id for t in store.traces("C")]
        == ["renamed-0"]
        == [t.trace_id for t in store.traces_named("renamed-0")]
    )
    store.close()
