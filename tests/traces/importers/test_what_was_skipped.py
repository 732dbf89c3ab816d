"""Importers say what they left out and why, per file and per line, and what would read it (issue: importers
that guessed quietly)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rredcot_viz.errors import ImportFormatError
from rredcot_viz.traces.importers import import_file
from rredcot_viz.traces.importers.rollouts import ROLLOUT_KEY


def verl_line(step: int | None, index: int = 0, prompt: str = "user\nWhat is 2+2?\nassistant\n") -> str:
    record = {"input": prompt, "output": f"2 + 2 = 4. The answer is 4. ({index})", "score": 1.0, "step": step}
    return json.dumps({k: v for k, v in record.items() if v is not None}) + "\n"


def test_a_verl_folder_names_the_files_it_leaves_out(tmp_path):
    """step_3.jsonl was skipped without a word (now read as step 3), final.jsonl still is (said), and one empty
    step file refused the whole folder (now skipped, said)."""
    for name, lines in {"1.jsonl": [verl_line(1)], "step_3.jsonl": [verl_line(3)], "final.jsonl": [verl_line(9)],
                        "2.jsonl": []}.items():  # fmt: skip
        (tmp_path / name).write_text("".join(lines))
    report = import_file(tmp_path)
    assert [t.metadata[ROLLOUT_KEY]["step"] for t in report.traces] == [1, 3]
    assert "skipped 1 empty step file: 2.jsonl" in report.warnings
    assert any(w.startswith("skipped 1 .jsonl file not named by a step (final.jsonl)") for w in report.warnings)


def test_a_verl_dump_whose_first_line_lacks_step_is_still_verl(tmp_path):
    """It was read whole as plain records: the chat template became the question and no run was formed."""
    dump = tmp_path / "1.jsonl"
    dump.write_text(verl_line(None) + verl_line(1, 1) + verl_line(1, 2))
    report = import_file(dump)
    assert report.format == "verl_rollouts" and len(report.traces) == 2
    assert report.traces[0].question == "What is 2+2?"
    (issue,) = report.issues
    assert issue.line == 1 and "`step` is missing (verl writes it on every line" in issue.message


def test_verl_prompts_with_chat_tokens_give_the_user_turn():
    chat = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2+2?\n\nThink.<|im_end|>\n"
    chat += "<|im_start|>assistant\n"
    from rredcot_viz.traces.importers.verl_rollouts import VerlRolloutsImporter

    (trace,) = VerlRolloutsImporter().convert(json.loads(verl_line(1, prompt=chat)))
    assert trace.question == "What is 2+2?\n\nThink." and trace.metadata["input"] == chat


def test_a_trl_log_without_its_step_column_names_what_it_lacks(tmp_path):
    """Every row failed with "prompt must be text, got list" and no hint."""
    folder = tmp_path / "completions"
    folder.mkdir()
    messages = [[{"role": "user", "content": "What is 2+2?"}]]
    pq.write_table(
        pa.table({"prompt": messages, "completion": ["The answer is 4."]}), folder / "completions_00001.parquet"
    )
    report = import_file(tmp_path)
    assert not report.traces and report.issues
    (hint,) = report.warnings
    assert (
        hint.startswith("the records have `prompt`, `completion` of the trl_completions format")
        and "lack `step`, `advantage`" in hint
    )


@pytest.mark.parametrize("name", ["header.csv", "empty.parquet"])
def test_a_file_with_no_records_is_an_error_not_an_empty_success(tmp_path, name):
    path = tmp_path / name
    if name.endswith(".csv"):
        path.write_text("question,cot\n")
    else:
        pq.write_table(pa.table({"question": pa.array([], pa.string())}), path)
    with pytest.raises(ImportFormatError, match=f"{name} holds no records: nothing to import"):
        import_file(path)


def test_an_arrow_stream_file_is_read_not_called_binary(tmp_path):
    table = pa.table({"question": ["What is 1+1?"], "cot": ["1 + 1 = 2. The answer is 2."]})
    with pa.ipc.new_stream(tmp_path / "x.arrows", table.schema) as writer:
        writer.write_table(table)
    (trace,) = import_file(tmp_path / "x.arrows").traces
    assert trace.answer == "2"


def test_a_utf16_csv_is_told_the_encoding_that_reads_it(tmp_path):
    """The advice was `--encoding latin-1`, which read 0 traces."""
    path = tmp_path / "u16.csv"
    path.write_text("question,cot\nWhat is 1+1?,1 + 1 = 2. The answer is 2.\n", encoding="utf-16")
    with pytest.raises(ImportFormatError, match=r"UTF-16 byte-order mark: `--encoding utf-16`"):
        import_file(path)
    assert len(import_file(path, encoding="utf-16").traces) == 1
