"""Every adversarial input class gets a clear message and exit code, never a traceback (importers/base.py and the
``import`` command). The fixtures are written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_cli import run_cli

from rredcot_viz.cli import main
from rredcot_viz.errors import ConfigError, ImportFormatError, TraceError
from rredcot_viz.traces.importers import import_file, json_records
from rredcot_viz.traces.trace import Trace

GOOD = {"question": "What is 2 + 3?", "cot": "2 + 3 = 5. The answer is 5.", "reference_answer": "5"}


def jsonl(tmp_path: Path, name: str, records: list) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_latin1_file_names_byte_offset_line_and_the_encoding_option(tmp_path: Path, capsys) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + '{"question": "Caf\xe9?", "cot": "x"}\n'.encode("latin-1"))
    offset = len(json.dumps(GOOD)) + 1 + len('{"question": "Caf')
    with pytest.raises(
        ImportFormatError,
        match=rf"latin.jsonl is not valid utf-8 text: byte 0xe9 at offset {offset} "
        r"\(line 2\).*--encoding latin-1",
    ):
        import_file(path)
    code, _, err = run_cli(capsys, str(path))
    assert code == 2 and "byte 0xe9" in err
    report = import_file(path, encoding="latin-1")
    assert [t.question for t in report.traces] == ["What is 2 + 3?", "Café?"]
    code, out, _ = run_cli(capsys, str(path), "--encoding", "latin-1")
    assert code == 0 and "traces                   2" in out


def test_binary_file_is_named_as_binary(tmp_path: Path, capsys) -> None:
    path = tmp_path / "blob.jsonl"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ImportFormatError, match="blob.jsonl looks like a binary file \\(a NUL byte at offset 0\\)"):
        import_file(path)
    assert run_cli(capsys, str(path))[0] == 2


def test_random_bytes_without_nul_are_a_decoding_message(tmp_path: Path) -> None:
    path = tmp_path / "noise.json"
    path.write_bytes(b"[\xff\xfe\xfa" * 50)
    with pytest.raises(ImportFormatError, match="noise.json is not valid utf-8 text: byte 0xff at offset 1"):
        import_file(path)


def test_bom_and_utf16_with_its_encoding_import(tmp_path: Path) -> None:
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    assert len(import_file(bom).traces) == 1
    wide = tmp_path / "wide.json"
    wide.write_bytes(json.dumps([GOOD, GOOD]).encode("utf-16"))
    expected = r"wide.json is UTF-16 text \(little-endian byte-order mark\), not utf-8 text; read it with `--encoding"
    with pytest.raises(ImportFormatError, match=expected):
        import_file(wide)
    assert len(import_file(wide, encoding="utf-16").traces) == 2


def test_unknown_encoding_is_a_message(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="unknown text encoding 'klingon'"):
        import_file(jsonl(tmp_path, "a.jsonl", [GOOD]), encoding="klingon")


def test_deep_nesting_whole_document_and_one_line(tmp_path: Path, capsys) -> None:
    document = tmp_path / "deep.json"
    document.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ImportFormatError, match="deep.json: the JSON is nested too deeply"):
        import_file(document)
    assert run_cli(capsys, str(document))[0] == 2
    lines = tmp_path / "deep.jsonl"
    lines.write_text(json.dumps(GOOD) + "\n" + '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    report = import_file(lines)
    assert len(report.traces) == 1
    assert [str(i) for i in report.issues] == [
        "deep.jsonl:line 2: the JSON is nested too deeply to read (more than about 1000 levels)"
    ]


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("NaN", "`reference_answer` is NaN"),
        ("Infinity", "`reference_answer` is infinite"),
        ("[1, 2]", "`reference_answer` is a list"),
        ("true", "`reference_answer` is a boolean"),
    ],
)
def test_non_text_references_are_reported_not_stored(tmp_path: Path, reference: str, expected: str) -> None:
    path = tmp_path / "refs.jsonl"
    path.write_text(json.dumps({"question": "Q?", "trace": "x = 1"})[:-1] + f', "reference_answer": {reference}}}\n')
    report = import_file(path)
    assert report.traces == [] and expected in report.issues[0].message


def test_nan_reference_in_our_own_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "native.jsonl"
    path.write_text('{"question": "Q?", "cot": "x = 1", "reference_answer": NaN}\n')
    report = import_file(path)
    assert report.format == "native" and "reference_answer must be text or absent, got nan" in report.issues[0].message


def test_numeric_reference_becomes_its_text(tmp_path: Path) -> None:
    report = import_file(jsonl(tmp_path, "n.jsonl", [{"question": "Q?", "response": "The answer is 6.", "answer": 6}]))
    assert report.traces[0].reference_answer == "6" and report.traces[0].outcome == 1.0


def test_empty_fields_and_empty_file(tmp_path: Path, capsys) -> None:
    report = import_file(jsonl(tmp_path, "e.jsonl", [GOOD, {**GOOD, "cot": ""}]))
    assert len(report.traces) == 1 and "non-empty chain-of-thought" in report.issues[0].message
    plain = [{"question": "Q?", "response": "x"}, {"question": "", "response": "x"}, {"question": "Q?", "response": ""}]
    messages = [issue.message for issue in import_file(jsonl(tmp_path, "p.jsonl", plain)).issues]
    assert messages == [
        "plain: the question field `question` is empty",
        "plain: the response field `response` is empty",
    ]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(ImportFormatError, match="empty.jsonl is empty"):
        import_file(empty)
    assert run_cli(capsys, str(empty))[0] == 2


def test_huge_document_asks_for_jsonl_and_jsonl_streams(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(json_records, "MAX_DOCUMENT_BYTES", 100)
    array = tmp_path / "big.json"
    array.write_text(json.dumps([GOOD] * 5))
    with pytest.raises(ImportFormatError, match="big.json is 0.0 GB of one JSON document.*write it as JSONL"):
        import_file(array)
    assert len(import_file(jsonl(tmp_path, "big.jsonl", [GOOD] * 5)).traces) == 5  # no whole-file limit


def test_unrecognised_fields_say_what_was_seen_and_the_mapping(tmp_path: Path, capsys) -> None:
    path = jsonl(tmp_path, "mine.jsonl", [{"q": "What is 2 + 3?", "model_text": "2 + 3 = 5. The answer is 5."}])
    code, _, err = run_cli(capsys, str(path))
    assert code == 2
    assert "mine.jsonl: cannot tell the format of the first record: the record has fields ['model_text', 'q']" in err
    assert "--map model_text=cot --map q=question" in err
    code, out, _ = run_cli(capsys, str(path), "--map", "model_text=cot", "--map", "q=question")
    assert code == 0 and "traces                   1" in out
    code, _, err = run_cli(capsys, str(path), "--map", "model_text")
    assert code == 2 and "is not THEIRS=OURS" in err


def test_natural_field_file_imports_without_options(tmp_path: Path, capsys) -> None:
    record = {
        "question": "Q?",
        "trace": "1 + 1 = 2. The answer is 2.",
        "reference_answer": "2",
        "reference_solution": "1+1",
    }
    code, out, _ = run_cli(capsys, str(jsonl(tmp_path, "natural.jsonl", [record])))
    assert code == 0 and "format                   plain" in out and "with_reference_solution  1" in out


def test_a_lone_surrogate_is_replaced_and_said_and_the_trace_writes(tmp_path: Path, capsys) -> None:
    """`"\\ud800"` parses into a string no UTF-8 file, store or tokenizer takes; it used to import and then crash
    `import --out` and `analyze`. It is replaced with U+FFFD, with a warning naming the line."""
    path = tmp_path / "lone.jsonl"
    lone = json.dumps({**GOOD, "cot": "COT"}).replace("COT", "2 + 3 = 5 \\ud800. The answer is 5.")
    path.write_text(json.dumps(GOOD) + "\n" + lone + "\n")
    report = import_file(path)
    assert [t.cot for t in report.traces] == [GOOD["cot"], "2 + 3 = 5 \ufffd. The answer is 5."]
    assert report.issues == [] and len(report.warnings) == 1
    assert report.warnings[0].startswith("lone surrogate escapes (e.g. \\ud800, half of a UTF-16 pair")
    assert report.warnings[0].endswith("(1 record: line 2)")
    out = tmp_path / "out.jsonl"
    code, text, _ = run_cli(capsys, str(path), "--out", str(out))
    assert code == 0 and "warning: lone surrogate escapes" in text and "wrote 2 traces" in text
    assert [t.cot for t in import_file(out).traces] == [t.cot for t in report.traces]  # valid UTF-8 JSONL
    paired = tmp_path / "emoji.jsonl"  # a proper pair is one character, untouched
    paired.write_text(json.dumps({**GOOD, "question": "What is 2 + 3? \U0001f600"}) + "\n")
    assert import_file(paired).traces[0].question.endswith("\U0001f600") and not import_file(paired).warnings
    with pytest.raises(TraceError, match=r"question holds a lone surrogate \(U\+D800 at character 1\)"):
        Trace("Q\ud800?", "x")


def test_repeated_keys_keep_the_last_value_and_are_said(tmp_path: Path) -> None:
    path = tmp_path / "twice.jsonl"
    path.write_text(
        '{"question": "first?", "question": "What is 2 + 3?", "cot": "2 + 3 = 5.", "reference_answer": "5"}\n'
        + json.dumps(GOOD) + "\n"
        + '{"question": "Q?", "cot": "x", "metadata": {"k": 1, "k": 2}}\n'
    )  # fmt: skip
    report = import_file(path)
    assert [t.question for t in report.traces] == ["What is 2 + 3?", GOOD["question"], "Q?"]
    assert report.traces[2].metadata == {"k": 2}
    assert report.warnings == [
        "repeated JSON key `question`: the last value was kept (1 record: line 1)",
        "repeated JSON key `metadata.k`: the last value was kept (1 record: line 3)",
    ]
    array = tmp_path / "twice.json"
    array.write_text('[{"question": "a?", "cot": "x", "cot": "y"}, ' + json.dumps(GOOD) + "]")
    assert import_file(array).warnings == ["repeated JSON key `cot`: the last value was kept (1 record: record 0)"]


def test_trace_ids_that_name_several_traces_are_said(tmp_path: Path) -> None:
    records = [{**GOOD, "trace_id": "dup"}, {**GOOD, "cot": "5. The answer is 5.", "trace_id": "dup"}]
    records.append({**GOOD, "trace_id": "dup"})  # the same trace again is not ambiguous
    report = import_file(jsonl(tmp_path, "ids.jsonl", records))
    assert report.warnings == [
        "1 trace ids name more than one trace: 'dup' (2 traces); pick such a trace by its index or short hash"
    ]


def test_gzip_is_read_as_is_and_other_containers_are_named(tmp_path: Path, capsys) -> None:
    import gzip

    lines = tmp_path / "traces.jsonl.gz"
    lines.write_bytes(gzip.compress(((json.dumps(GOOD) + "\n") * 3).encode()))
    assert len(import_file(lines).traces) == 3
    array = tmp_path / "traces.json.gz"
    array.write_bytes(gzip.compress(json.dumps([GOOD, GOOD]).encode()))
    assert len(import_file(array).traces) == 2
    broken = tmp_path / "cut.jsonl.gz"
    broken.write_bytes(gzip.compress(((json.dumps(GOOD) + "\n") * 200).encode())[:-40])
    with pytest.raises(ImportFormatError, match="cut.jsonl.gz could not be read to the end"):
        import_file(broken)
    for name, head, expected in [
        ("t.parquet", b"PAR1\x15\x04", "t.parquet is not a readable parquet file"),  # read as parquet: damaged
        ("t.arrow", b"ARROW1\x00\x00", "t.arrow is not a readable Arrow file"),
        ("t.zip", b"PK\x03\x04\x14", "t.zip is a zip archive, not JSON text; unzip it"),
        ("t.jsonl.bz2", b"BZh91AY", "t.jsonl.bz2 is bzip2-compressed, not JSON text; decompress it first"),
    ]:
        path = tmp_path / name
        path.write_bytes(head + bytes(range(256)))
        with pytest.raises(ImportFormatError, match=expected):
            import_file(path)
    code, _, err = run_cli(capsys, str(tmp_path / "t.zip"))
    assert code == 2 and "zip archive" in err


def test_csv_and_other_text_are_named_not_called_invalid_json(tmp_path: Path) -> None:
    csv = tmp_path / "traces.txt"  # a .csv name is read as CSV (readers.py); under another name it is named
    csv.write_text("question,cot,reference_answer\nWhat is 2 + 3?,2 + 3 = 5.,5\n")
    with pytest.raises(ImportFormatError, match=r"traces.txt looks like a CSV file \(its first line is `question,cot.*"
                       r"rename it to traces.csv"):  # fmt: skip
        import_file(csv)
    assert len(import_file(csv.rename(tmp_path / "traces.csv")).traces) == 1
    tsv = tmp_path / "traces.dat"
    tsv.write_text("question\tcot\nQ?\tx\n")
    with pytest.raises(ImportFormatError, match="looks like a TSV file.*rename it to traces.tsv"):
        import_file(tsv)
    prose = tmp_path / "notes.txt"
    prose.write_text("These are my notes\n")
    with pytest.raises(ImportFormatError, match="notes.txt is not JSON: it starts with `These are my notes`"):
        import_file(prose)


def step_record(label: int, steps: int = 3) -> dict:
    return {"problem": "What is 2 + 3?", "steps": [f"Step {i}." for i in range(steps)], "label": label}


def test_one_based_labels_are_noticed_and_read_with_label_base_1(tmp_path: Path, capsys) -> None:
    path = tmp_path / "one_based.json"
    path.write_text(json.dumps([step_record(3), step_record(1), step_record(-1), step_record(2)]))
    report = import_file(path)
    assert len(report.traces) == 3 and "first_error 3 is out of range" in report.issues[0].message
    (warning,) = report.warnings
    assert warning.startswith("the `label` labels look 1-based: 1 records have a label equal to their number of steps")
    assert "--label-base 1" in warning
    shifted = import_file(path, label_base=1)
    assert [t.first_error for t in shifted.traces] == [2, 0, -1, 1] and not shifted.warnings
    code, out, _ = run_cli(capsys, str(path), "--label-base", "1")
    assert code == 0 and "with_first_error_label   4" in out
    zero = tmp_path / "zero.json"
    zero.write_text(json.dumps([step_record(0), step_record(3)]))
    assert not import_file(zero).warnings  # a label 0 is a 0-based file's: no hint
    refused = import_file(zero, label_base=1).issues[0].message
    assert "`label` is 0, but with label base 1 steps are numbered from 1" in refused


def test_limit_must_be_at_least_one_everywhere(tmp_path: Path, capsys) -> None:
    path = jsonl(tmp_path, "a.jsonl", [GOOD, GOOD])
    for value in ("0", "-1"):
        for command in (["import", str(path)], ["analyze", str(path)], ["eval-diagnosis", "--data", str(path)]):
            with pytest.raises(SystemExit):
                main([*command, "--limit", value])
            assert f"--limit: must be at least 1, got {value}" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="limit must be at least 1 record"):
        import_file(path, limit=0)
    assert import_file(path, limit=1).records_read == 1


def test_a_field_mapped_twice_is_refused(tmp_path: Path, capsys) -> None:
    path = jsonl(tmp_path, "m.jsonl", [{"q": "Q?", "text": "x", "other": "y"}])
    code, _, err = run_cli(capsys, str(path), "--map", "text=cot", "--map", "text=question")
    assert code == 2 and "field mapping names 'text' twice (text=cot and text=question)" in err
    code, _, err = run_cli(capsys, str(path), "--map", "text=cot", "--map", "other=cot")
    assert code == 2 and "field mapping maps both 'text' and 'other' to 'cot'" in err
    code, out, _ = run_cli(capsys, str(path), "--map", "text=cot", "--map", "text=cot", "--map", "q=question")
    assert code == 0 and "traces                   1" in out  # the same pair twice says one thing


def test_gold_fields_are_references_never_the_suggested_response(tmp_path: Path, capsys) -> None:
    """A step-labelled set with a model solution beside the gold one: the gold solution was suggested as `cot`
    (the longest unknown text), which imports gold solutions as model traces."""
    record = {
        "problem": "What is 2 + 3?",
        "ground_truth_solution": "We add the two numbers carefully: 2 + 3 = 5, so the answer is 5. " * 3,
        "ground_truth_answer": "5",
        "generated": "2 + 3 = 6. The answer is 6.",
    }
    path = jsonl(tmp_path, "gold.jsonl", [record])
    code, _, err = run_cli(capsys, str(path))
    assert code == 2 and "--map generated=cot" in err and "ground_truth_solution=cot" not in err
    (trace,) = import_file(path, field_map={"generated": "cot"}).traces
    assert (trace.cot, trace.reference_answer, trace.outcome) == (record["generated"], "5", 0.0)
    assert trace.reference_solution == record["ground_truth_solution"].strip()
