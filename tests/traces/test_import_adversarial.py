"""Every adversarial input class gets a clear message and exit code, never a traceback (importers/base.py and the
``import`` command). The fixtures are written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rredcot_viz.cli import main
from rredcot_viz.errors import ImportFormatError
from rredcot_viz.traces.importers import base, import_file

GOOD = {"question": "What is 2 + 3?", "cot": "2 + 3 = 5. The answer is 5.", "reference_answer": "5"}


def jsonl(tmp_path: Path, name: str, records: list) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["import", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.out, captured.err


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
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 100)
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
