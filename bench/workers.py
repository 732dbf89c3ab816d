"""Worker processes for the benches: each loads the model once and runs on one thread (on a small model a second
thread gains little, a second process nearly doubles the throughput of 2 cores)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import torch

from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig

_MODEL: list[LanguageModel] = []


def model_pool(workers: int, source: str | None = None) -> ProcessPoolExecutor:
    """``workers`` spawned processes, each holding the model ``source`` (None: the embedded default)."""
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_load, initargs=(source,))


def worker_model() -> LanguageModel:
    """The model this worker process loaded."""
    return _MODEL[0]


def _load(source: str | None) -> None:
    torch.set_num_threads(1)
    _MODEL.append(LanguageModel.load(None if source is None else ModelConfig(source=source)))
