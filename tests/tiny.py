"""Tiny, randomly initialised models for fast exact unit tests (no files, no downloads).

The tokenizer is a byte-level BPE trained in memory on a small corpus, with the chat markers of SmolLM2's
template, so prompts, offsets and special tokens behave like the real model's.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from rredcot_viz.model.lm import LanguageModel

CORPUS = [
    "Question: Tom has 3 apples and buys 5 more. How many apples does he have?",
    "Tom starts with 3 apples. He buys 5 more, so 3 + 5 = 8. Therefore, the final answer is \\boxed{8}.",
    "Wait, let me check again. But the train leaves at 9 and arrives at 11, so it takes 2 hours.",
    "So the total is 12 * 4 = 48. Next, we subtract 6 to get 42. Now divide by 7: the answer is 6.",
    "Alternatively, Hmm, Let me think step by step about the problem and the numbers 0 1 2 3 4 5 6 7 8 9.",
    "You are a careful math tutor. Reason step by step in plain prose, then state the final answer.",
]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@lru_cache(maxsize=1)
def tiny_tokenizer() -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    backend.train_from_iterator(CORPUS * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(seed: int = 0, layers: int = 2, attn: str = "sdpa", hidden: int = 32) -> LlamaForCausalLM:
    """``hidden`` 64 or more for bitsandbytes' 4-bit CPU kernels (one 64-weight block per row at least)."""
    tokenizer = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=False,
    )
    config._attn_implementation = attn
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # sharper than the default init so that log-probs differ visibly between tokens
        for parameter in model.parameters():
            parameter.mul_(8.0) if parameter.dim() > 1 else None
    return model.eval()


def tiny_lm(seed: int = 0, layers: int = 2, **kwargs) -> LanguageModel:
    return LanguageModel(
        tiny_model(seed, layers), tiny_tokenizer(), name=f"tiny-llama-{seed}", fingerprint=f"tiny{seed}", **kwargs
    )
