"""The model core (model/core.py) on tiny random models: offsets, prompt formats, and the out-of-memory message."""

from __future__ import annotations

import pytest
import torch

from rredcot_viz.errors import ModelOutOfMemoryError
from rredcot_viz.model.core import RAW_PROMPT_TEMPLATE


def test_offsets_tile_the_text(tiny):
    text = "Hmm,  ünïcode ✓ and\n\nnew lines: 3.5 * 2 = 7"
    encoding = tiny.encode_with_offsets(text)
    assert encoding.starts[0] == 0
    assert encoding.starts == sorted(encoding.starts)
    assert len(encoding.ids) == len(encoding.starts)
    assert tiny.tokenizer.decode(encoding.ids) == text  # byte-level BPE is lossless


def test_prompt_formats(tiny):
    chat = tiny.format_prompt("Add 2 and 3.", system="Be brief.")
    assert chat.startswith("<|im_start|>system\nBe brief.<|im_end|>") and chat.endswith("<|im_start|>assistant\n")
    ids = tiny.encode_prompt(chat)
    assert ids[0] == tiny.tokenizer.convert_tokens_to_ids("<|im_start|>")  # markers parsed as special tokens
    assert tiny.format_prompt("Add 2 and 3.", chat=False) == RAW_PROMPT_TEMPLATE.format(question="Add 2 and 3.")


def test_out_of_memory_suggests_4bit_or_smaller_model(tiny, monkeypatch):
    def explode(**_kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(
        tiny,
        "model",
        type(
            "Boom",
            (),
            {"__call__": staticmethod(explode), "parameters": tiny.model.parameters, "config": tiny.model.config},
        )(),
    )
    with pytest.raises(ModelOutOfMemoryError, match="4-bit.*smaller model"):
        tiny.token_stats([5, 6, 7], start=1)
