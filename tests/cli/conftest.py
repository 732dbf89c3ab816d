"""A tiny random model saved as a model folder, for commands run as a user would (``--model DIR``)."""

from __future__ import annotations

import pytest
from tiny import tiny_model, tiny_tokenizer


@pytest.fixture
def tiny_model_dir(tmp_path):
    folder = tmp_path / "tiny-model"
    tiny_model(0).save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return folder
