"""Where records come from (importers/readers.py): parquet and Arrow streamed in batches, CSV/TSV with a header,
dataset folders by split and config, and every bad file a message naming file and line or row, exit code 2.
The fixtures are written here."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from import_cli import run_cli

from rredcot_viz.errors import ImportFormatError
from rredcot_viz.traces.importers import import_file, readers
from rredcot_viz.traces.importers.readers import dataset_files, iter_records, reader_name

ROWS = [
    {"question": "What is 2 + 3?", "response": "2 + 3 = 5. The answer is 5.", "answer": "5"},
    {"question": "What is 4 * 2?", "response": "4 * 2 = 8. The answer is 8.", "answer": "8"},
    {"question": "What is 9 - 7?", "response": "9 - 7 = 3. The answer is 3.", "answer": "2"},
]


def write_parquet(path: Path, rows: list[dict], **options) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path, **options)
    return path


def write_arrow_stream(path: Path, rows: list[dict]) -> Path:
    """What ``datasets`` writes in ``save_to_disk`` folders: the Arrow IPC *stream* format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return path


def outcomes(path: Path, **options) -> list[float | None]:
    report = import_file(path, **options)
    assert not report.issues, report.issues
    return [t.outcome for t in report.traces]


def test_parquet_goes_through_field_detection_in_batches(tmp_path, monkeypatch):
    path = write_parquet(tmp_path / "rows.parquet", ROWS * 5, row_group_size=4)
    batches = []
    original = pq.ParquetFile.iter_batches

    def spy(self, *args, **kwargs):
        for batch in original(self, *args, **kwargs):
            batches.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(readers, "BATCH_ROWS", 3)
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    report = import_file(path)
    assert report.format == "plain" and len(report.traces) == 15
    assert [t.outcome for t in report.traces[:3]] == [1.0, 1.0, 0.0]
    assert max(batches) <= 3 and sum(batches) == 15  # never the whole table at once


def test_a_single_row_group_is_streamed_not_read_whole(tmp_path):
    """pandas (and so TRL) writes one row group: the reader must not pre-buffer its column chunks whole."""
    rng = random.Random(0)  # text that does not compress away
    rows = [{"question": f"Q{i}?", "response": rng.randbytes(160).hex(), "answer": str(i)} for i in range(120_000)]
    path = write_parquet(tmp_path / "one_group.parquet", rows)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1).total_compressed_size
    records = iter_records(path)
    for _ in range(3 * readers.BATCH_ROWS):
        next(records)
    assert chunk > 30e6 and pa.total_allocated_bytes() < chunk / 2  # pre-buffered: 1.3 x the chunk


def test_arrow_stream_and_file_formats(tmp_path):
    stream = write_arrow_stream(tmp_path / "data-00000-of-00001.arrow", ROWS)
    assert outcomes(stream) == [1.0, 1.0, 0.0]
    table = pa.Table.from_pylist(ROWS)
    with pa.OSFile(str(tmp_path / "rows.feather"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    assert reader_name(tmp_path / "rows.feather") == "arrow"
    assert outcomes(tmp_path / "rows.feather") == [1.0, 1.0, 0.0]


def test_magic_bytes_win_over_the_suffix(tmp_path):
    path = write_parquet(tmp_path / "exported.bin", ROWS)
    assert reader_name(path) == "parquet" and outcomes(path) == [1.0, 1.0, 0.0]


def test_csv_and_tsv_with_typed_cells(tmp_path):
    frame = pd.DataFrame(
        {
            "question": ["What is 2 + 3?", "Name two steps"],
            "cot": ["2 + 3 = 5.\nThe answer is 5.", "First.\n\nSecond. The answer is 2."],
            "reference_answer": ["5", ""],
            "correct": ["", "false"],
            "first_error": ["", "1"],
            "steps": ["", json.dumps(["First.", "Second. The answer is 2."])],
        }
    )
    frame.to_csv(tmp_path / "rows.csv", index=False)
    frame.to_csv(tmp_path / "rows.tsv", index=False, sep="\t")
    for name in ("rows.csv", "rows.tsv"):
        report = import_file(tmp_path / name)
        assert not report.issues, report.issues
        first, second = report.traces
        assert (first.reference_answer, first.outcome, first.cot) == ("5", 1.0, "2 + 3 = 5.\nThe answer is 5.")
        assert (second.correct, second.first_error, second.steps) == (False, 1, ("First.", "Second. The answer is 2."))
        assert second.reference_answer is None  # an empty cell is a missing value


def test_csv_rows_that_do_not_fit_are_reported_with_their_line(tmp_path, capsys):
    path = tmp_path / "ragged.csv"
    path.write_text(
        'question,cot\n"What is 2 + 3?","2 + 3 = 5.\nThe answer is 5."\nonly one cell\n\n"Q?",""\n', encoding="utf-8"
    )
    report = import_file(path)
    assert len(report.traces) == 1 and report.records_read == 3 and report.records_failed == 2
    assert [str(i) for i in report.issues] == [
        "ragged.csv:line 4: 1 cells for the header's 2 columns",
        "ragged.csv:line 6: native: a trace needs a non-empty chain-of-thought text (cot)",
    ]
    code, out, _ = run_cli(capsys, str(path))
    assert code == 0 and "problem: ragged.csv:line 4: 1 cells for the header's 2 columns" in out


def test_a_bad_table_row_names_its_row(tmp_path):
    rows = [*ROWS, {"question": "What is 1 + 1?", "response": None, "answer": "2"}, ROWS[0]]
    path = write_parquet(tmp_path / "rows.parquet", rows)
    report = import_file(path, fmt="plain")
    assert len(report.traces) == 4 and len(report.issues) == 1
    assert str(report.issues[0]).startswith("rows.parquet:row 3: plain: ")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.parquet", b"PAR1" + b"\x00" * 40, "broken.parquet is not a readable parquet file"),
        ("broken.arrow", b"\xff\xff\xff\xff" + b"\x07" * 40, "broken.arrow is not a readable Arrow file"),
        ("empty.csv", b"", "empty.csv is empty or has no header row"),
        ("latin.csv", "question,cot\nCafé?,x\n".encode("latin-1"), r"latin.csv is not valid utf-8 text \(byte 0xe9\)"),
        ("twice.tsv", b"question\tquestion\nQ\tA\n", r"twice.tsv: the header names \['question'\] more than once"),
    ],
)
def test_bad_files_are_one_message_and_exit_code_2(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ImportFormatError, match=message):
        import_file(path)
    code, _, err = run_cli(capsys, str(path))
    assert code == 2 and err.startswith("error: ")


def test_a_damaged_parquet_file_is_named_not_a_traceback(tmp_path, capsys):
    path = write_parquet(tmp_path / "damaged.parquet", ROWS * 4000, row_group_size=2000, compression="none")
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 2000] = b"\xff" * 2000
    path.write_bytes(bytes(data))
    with pytest.raises(ImportFormatError, match=r"damaged.parquet is damaged: its data cannot be read past row \d+"):
        import_file(path)
    assert run_cli(capsys, str(path))[0] == 2


def test_latin1_csv_reads_with_its_encoding(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("question,cot,answer\nCafé costs 3 + 4?,3 + 4 = 7. The answer is 7.,7\n".encode("latin-1"))
    report = import_file(path, encoding="latin-1")
    assert [t.question for t in report.traces] == ["Café costs 3 + 4?"]


def hub_snapshot(root: Path) -> Path:
    """A Hugging Face dataset repository as the hub lays it out: configs, splits, shards."""
    for config in ("main", "socratic"):
        for split, rows in (("train", ROWS[:2]), ("test", ROWS[2:])):
            write_parquet(root / config / f"{split}-00000-of-00001.parquet", rows)
    (root / "README.md").write_text("---\nconfigs: ...\n---\n")
    return root


def test_a_dataset_folder_needs_its_config_and_split_named(tmp_path, capsys):
    root = hub_snapshot(tmp_path / "gsm8k")
    with pytest.raises(ImportFormatError, match=r"holds several configs \(main, socratic\); choose one with --config"):
        import_file(root)
    with pytest.raises(ImportFormatError, match=r"holds several splits \(test, train\); choose one with --split"):
        import_file(root, config="main")
    with pytest.raises(ImportFormatError, match=r"has no split 'dev'; its splits: test, train"):
        import_file(root, config="main", split="dev")
    assert outcomes(root, config="main", split="test") == [0.0]
    assert outcomes(root, config="socratic", split="train") == [1.0, 1.0]
    code, out, _ = run_cli(capsys, str(root), "--config", "main", "--split", "train")
    assert code == 0 and "traces                   2" in out
    assert run_cli(capsys, str(root))[0] == 2


def test_save_to_disk_and_cache_layouts(tmp_path):
    saved = tmp_path / "saved"
    (saved).mkdir()
    (saved / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    write_arrow_stream(saved / "train" / "data-00000-of-00002.arrow", ROWS[:1])
    write_arrow_stream(saved / "train" / "data-00001-of-00002.arrow", ROWS[1:2])
    write_arrow_stream(saved / "test" / "data-00000-of-00001.arrow", ROWS[2:])
    for split in ("train", "test"):
        (saved / split / "state.json").write_text("{}")
        (saved / split / "dataset_info.json").write_text("{}")
    assert [p.name for p in dataset_files(saved, split="train")] == [
        "data-00000-of-00002.arrow",
        "data-00001-of-00002.arrow",
    ]
    assert outcomes(saved, split="train") == [1.0, 1.0]
    cache = tmp_path / "cache"
    write_arrow_stream(cache / "gsm8k-train.arrow", ROWS[:2])
    write_arrow_stream(cache / "gsm8k-test.arrow", ROWS[2:])
    assert outcomes(cache, split="test") == [0.0]
    single = tmp_path / "single"
    write_parquet(single / "data" / "train-00000-of-00001.parquet", ROWS)
    assert outcomes(single) == [1.0, 1.0, 0.0]  # one split: no need to name it


def test_a_folder_without_data_files_is_named(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ImportFormatError, match="holds no data files"):
        import_file(tmp_path)
    with pytest.raises(ImportFormatError, match="does not exist"):
        import_file(tmp_path / "missing")


def test_records_carry_their_file_and_place(tmp_path):
    root = tmp_path / "steps"
    root.mkdir()
    for step in (2, 10, 1):
        (root / f"{step}.jsonl").write_text("".join(json.dumps({**ROWS[0], "n": step}) + "\n" for _ in range(2)))
    places = [(where.file, where.line, record["n"]) for where, record in iter_records(root)]
    assert places[::2] == [("1.jsonl", 1, 1), ("2.jsonl", 1, 2), ("10.jsonl", 1, 10)]  # numeric order, not text
    assert places[1] == ("1.jsonl", 2, 1)
