"""``ModelCore``: a transformers causal LM and its tokenizer, with what every kind of model call needs: prompts
(chat template or raw), token ids with character offsets, the model's lock and cost meter, and the one
``_forward`` every call counts its passes through. ``score``, ``generate`` and ``grads`` build on it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from rredcot_viz.errors import ModelOutOfMemoryError
from rredcot_viz.model.meter import CostMeter
from rredcot_viz.types import CallCost, Encoding

RAW_PROMPT_TEMPLATE = "Question: {question}\nAnswer: "
DEFAULT_SYSTEM_PROMPT = (
    "You are a careful math tutor. Reason step by step in plain prose (no code), then state the final "
    "answer as \\boxed{answer}."
)

ProgressFn = Callable[[int, int], None]


class ModelCore:
    """Tokenisation, prompts and plumbing shared by the scoring, sampling and gradient calls."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        name: str,
        fingerprint: str,
        device: str | None = None,
        dtype: str | None = None,
        quantization: str = "none",
        info: dict[str, Any] | None = None,
        prefill_chunk: int = 1024,
        pack_tokens: int | None = None,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.fingerprint = fingerprint
        self.device = device or str(next(model.parameters()).device)
        self.dtype = dtype or str(next(model.parameters()).dtype).removeprefix("torch.")
        self.quantization = quantization
        self.extra_info = info or {}
        self.prefill_chunk = prefill_chunk
        # Small chunks let each pass see only the cache up to its own prefixes; on a CPU that beats fewer, larger
        # passes (bench/scoring.py: 256 tokens 12.9 s, 1024 tokens 15.1 s); a GPU prefers large batches.
        self.pack_tokens = pack_tokens or (4096 if self.device.startswith("cuda") else 256)
        self.meter = CostMeter()
        # False: sampling runs every row to max_new_tokens, past end-of-sequence ids, stop strings and stated answers
        # (a bench that times fixed lengths: bench/credit_cost.py)
        self.stop_early = True
        self.lock = threading.RLock()
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token

    @property
    def context_length(self) -> int:
        config = self.model.config
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            value = getattr(config, attr, None)
            if isinstance(value, int) and value > 0:
                return value
        return int(getattr(self.tokenizer, "model_max_length", 2048))

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "fingerprint": self.fingerprint,
            "device": self.device,
            "dtype": self.dtype,
            "quantization": self.quantization,
            "context_length": self.context_length,
            "vocab_size": int(self.model.config.vocab_size),
            "parameters": sum(_count(p) for p in self.model.parameters()),
            "chat_template": self.has_chat_template,
            "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
            **self.extra_info,
        }

    def format_prompt(self, question: str, *, system: str | None = DEFAULT_SYSTEM_PROMPT, chat: bool = True) -> str:
        """The text that precedes the reasoning: the chat template's user turn and assistant header when the
        model has a template and ``chat`` is on, else ``RAW_PROMPT_TEMPLATE``."""
        if chat and self.has_chat_template:
            messages = ([{"role": "system", "content": system}] if system else []) + [
                {"role": "user", "content": question}
            ]
            return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return RAW_PROMPT_TEMPLATE.format(question=question)

    def encode_prompt(self, prompt_text: str) -> list[int]:
        """Ids of a prompt. Special tokens written in the text (chat markers) are parsed; a BOS token is added
        only when the text does not already start with one and the tokenizer adds one by default."""
        ids = self.tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
        bos = self.tokenizer.bos_token_id
        with_specials = self.tokenizer(prompt_text, add_special_tokens=True)["input_ids"]
        if bos is not None and with_specials[:1] == [bos] and ids[:1] != [bos]:
            ids = [bos, *ids]
        return ids

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def encode_with_offsets(self, text: str) -> Encoding:
        """Ids of ``text`` and each token's starting character; spans ``[starts[i], starts[i+1])`` tile it."""
        encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids = list(encoded["input_ids"])
        starts: list[int] = []
        last = 0
        for index, (start, _end) in enumerate(encoded["offset_mapping"]):
            start = 0 if index == 0 else max(int(start), last)  # monotone, first token owns leading text
            starts.append(start)
            last = start
        return Encoding(ids, starts)

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    @property
    def _mask_dtype(self) -> torch.dtype:
        dtype = next(self.model.parameters()).dtype
        return dtype if dtype.is_floating_point else torch.float32

    def _forward(self, cost: CallCost, **kwargs: Any) -> Any:
        cost.forward_passes += 1
        cost.tokens_processed += int(kwargs["input_ids"].numel())
        return self.model(**kwargs)

    @contextmanager
    def _guard(self, length: int) -> Iterator[None]:
        """Turn an accelerator out-of-memory into an error that says what to do."""
        try:
            yield
        except torch.OutOfMemoryError:
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            raise ModelOutOfMemoryError(
                f"the {self.device} device ran out of memory on a {length}-token sequence with {self.name}; "
                "load the model in 4-bit (quantization='4bit'), pick a smaller model, or shorten the trace"
            ) from None


def _count(parameter: torch.Tensor) -> int:
    """A parameter's weights; a 4-bit one stores two a byte, its quantisation state knows the true shape."""
    state = getattr(parameter, "quant_state", None)
    return int(state.shape.numel()) if state is not None else parameter.numel()
