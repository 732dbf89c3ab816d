"""Inspect's upload of a file whose traces the store already holds in another collection."""

from __future__ import annotations

import json

import pytest
from conftest import run_page
from test_inspect import settle

from rredcot_viz.traces.importers import import_file
from rredcot_viz.ui import resources

pytestmark = pytest.mark.integration


def test_an_upload_of_traces_stored_before_shows_them(tmp_path):
    """The upload said "1 traces" and then "No uploaded trace yet": its trace was stored in the dataset's
    collection, so the upload collection stayed without it."""
    record = {
        "question": "A crate holds 9 rows of 7 jars. How many jars?",
        "cot": "9 * 7 = 63.\nThe answer is \\boxed{63}.",
        "reference_answer": "63",
    }
    content = (json.dumps(record) + "\n").encode()
    (tmp_path / "crates.jsonl").write_bytes(content)
    known = import_file(tmp_path / "crates.jsonl").traces
    resources.store().put_traces(known, "dataset:crates")  # imported on the Dataset page or with the CLI
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Upload").run()
    app.main.get("file_uploader")[0].upload("crates.jsonl", content, "application/json")
    settle(app.run())
    assert "crates.jsonl: 1 traces (native)" in app.main.success[0].value
    assert not any("No uploaded trace yet" in i.value for i in app.info)
    assert app.sidebar.selectbox(key="trace_Upload").value == known[0].content_hash
    assert resources.store().collections()["dataset:crates"] == 1  # and it stays in its first collection
