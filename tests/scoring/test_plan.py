"""Token offsets of sampled ids (scoring/plan.py ``token_starts``): equal to decoding every prefix, on text that
splits characters across tokens and on random ids (any byte sequence), for a byte-level tokenizer (the tiny one's
and the embedded model's) and one whose decoder strips a first token's space (no cut is clean there)."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import tiny_tokenizer
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from rredcot_viz.scoring.plan import token_starts

TEXT = (
    "Tom starts with 3 apples . He buys 5 more , so 3 + 5 = 8 . Ça fait 8 pommes — très bien ! 東京 は 8 です。"
    " Emoji 🍎🍏 and ß, ø, ñ ; isn't it ? The answer is \\boxed{8}.\n\n"
)


def reference(decode, ids: list[int]) -> list[int]:
    return [len(decode(ids[:i])) for i in range(len(ids))]


def metaspace_tokenizer() -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.BPE(unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    backend.train_from_iterator([TEXT] * 4, trainer=trainers.BpeTrainer(vocab_size=200, special_tokens=["<unk>"]))
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>")


def tokenizers_to_test() -> list:
    found = [tiny_tokenizer(), metaspace_tokenizer()]
    try:
        from rredcot_viz.model.lm import LanguageModel

        found.append(LanguageModel.load().tokenizer)
    except Exception:  # the embedded model is not converted on this machine
        pass
    return found


@pytest.mark.parametrize("tokenizer", tokenizers_to_test(), ids=lambda t: type(t.backend_tokenizer.decoder).__name__)
def test_token_starts_equal_decoding_every_prefix(tokenizer):
    def decode(ids):
        return tokenizer.decode(ids, skip_special_tokens=True)

    text_ids = tokenizer(TEXT * 6)["input_ids"]
    random_ids = np.random.default_rng(0).integers(0, len(tokenizer), 600).tolist()
    for ids in (text_ids, random_ids):
        for block in (3, 64):
            assert token_starts(decode, tuple(ids), block=block) == reference(decode, ids)
