"""Sharded batch analysis: shards, part files, resume by content hash, merge order, and a real two-process
run (torchrun + accelerate on CPU) giving the same records as one process."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from rredcot_viz.engine import Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators import estimators
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.paths import PROJECT_ROOT, SAMPLE_TRACES_DIR
from rredcot_viz.segmenters import segmenters
from rredcot_viz.store import Store
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.workflows import batch

COMPARED = ["trace_hash", "trace_id", "k", "tokens", "sigma", "values", "error"]


def analyse(lm: LanguageModel, traces, out, rank: int = 0, count: int = 1, flush_every: int = 2) -> dict:
    analyzer = Analyzer(lm)
    segmenter, estimator = segmenters.get("hybrid")(k=3), estimators.get("rredcot")()
    return batch.run_shard(analyzer, batch.shard(traces, rank, count), segmenter, estimator, out, rank, flush_every)


def test_shards_resume_and_merge_in_dataset_order(tiny, tmp_path):
    traces = sample_traces()[:5]
    assert [t.trace_id for t in batch.shard(traces, 1, 2)] == [traces[1].trace_id, traces[3].trace_id]
    with pytest.raises(ConfigError, match="outside 0..1"):
        batch.shard(traces, 2, 2)
    single = analyse(tiny, traces, tmp_path / "one")
    assert (single["traces"], single["skipped"]) == (5, 0) and single["tokens"] > 0
    assert len(list((tmp_path / "one").glob("part-*.parquet"))) == 3  # 2 + 2 + 1
    again = analyse(tiny, traces, tmp_path / "one")
    assert (again["traces"], again["skipped"], again["tokens"]) == (5 - 5, 5, 0)  # resumed: nothing redone
    for rank in (1, 0):
        analyse(tiny, traces, tmp_path / "two", rank, 2)
    one = batch.merge_parts(tmp_path / "one", traces)
    two = batch.merge_parts(tmp_path / "two", traces)
    assert one["trace_hash"].tolist() == [t.content_hash for t in traces]
    assert sorted(two["process"]) == [0, 0, 0, 1, 1]
    pd.testing.assert_frame_equal(one[COMPARED], two[COMPARED])
    assert (tmp_path / "two" / batch.MERGED).is_file()
    with pytest.raises(ConfigError, match="1 of 6 traces have no result yet"):
        batch.merge_parts(tmp_path / "one", [*traces, sample_traces()[5]])


def test_merged_result_imports_as_a_dataset_run(tiny, tmp_path):
    traces = sample_traces()[:2]
    analyse(tiny, traces, tmp_path / "out")
    merged = batch.merge_parts(tmp_path / "out", traces)
    store = Store(tmp_path / "s.duckdb")
    segmenter, estimator = segmenters.get("hybrid")(k=3), estimators.get("rredcot")()
    run_id = batch.import_merged(store, merged, tiny.info(), segmenter, estimator, "two samples")
    from rredcot_viz.workflows.dataset import dataset_runs, load_run

    assert dataset_runs(store)["label"].tolist() == ["two samples"]
    assert [r.sigma for r in load_run(store, run_id)] == merged["sigma"].map(list).tolist()


@pytest.mark.integration
def test_two_cpu_processes_match_one(tmp_path):
    from tiny import tiny_model, tiny_tokenizer

    model_dir = tmp_path / "tiny-model"
    tiny_model(0).save_pretrained(model_dir)
    tiny_tokenizer().save_pretrained(model_dir)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m"]
    command += ["rredcot_viz", "analyze-dataset", str(SAMPLE_TRACES_DIR / "arithmetic.jsonl"), "--limit", "5"]
    command += ["--out", str(tmp_path / "two"), "--model", str(model_dir), "--k", "3", "--no-store"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(PROJECT_ROOT)}
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "process 0/2: 3 traces" in finished.stdout and "process 1/2: 2 traces" in finished.stdout
    assert "merged 5 traces" in finished.stdout
    lm = LanguageModel.load(ModelConfig(source=str(model_dir)))
    traces = sample_traces()[:5]
    analyse(lm, traces, tmp_path / "one", flush_every=8)
    two = pd.read_parquet(tmp_path / "two" / batch.MERGED)
    pd.testing.assert_frame_equal(batch.merge_parts(tmp_path / "one", traces)[COMPARED], two[COMPARED])
    assert sorted(two["process"]) == [0, 0, 0, 1, 1]
