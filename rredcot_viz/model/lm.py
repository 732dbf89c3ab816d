"""``LanguageModel``: the one class the rest of the project talks to.

It wraps a transformers causal LM and its tokenizer and offers exactly what the estimators, attributions
and trainer need: prompts (chat template or raw), token ids with character offsets, per-token log-probs and
entropies from one forward pass, many continuations scored after many prefixes of one sequence with the
prefix computation reused, and seeded batched sampling. Every call reports its cost.
"""

from __future__ import annotations

import copy
import functools
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from rredcot_viz.errors import ContextLengthError, ModelOutOfMemoryError
from rredcot_viz.model.packing import Continuation, build_chunk, chunk_past_length, plan_chunks
from rredcot_viz.model.sampling import SamplingConfig, select_tokens
from rredcot_viz.traces.answers import find_boxed

_ANSWER_STATED = re.compile(r"answer is:?\s*\$?-?\d[\d,]*(?:\.\d+)?\s*(?:\.\s|\n)", re.IGNORECASE)
RAW_PROMPT_TEMPLATE = "Question: {question}\nAnswer: "
DEFAULT_SYSTEM_PROMPT = (
    "You are a careful math tutor. Reason step by step in plain prose (no code), then state the final "
    "answer as \\boxed{answer}."
)

ProgressFn = Callable[[int, int], None]


def _serialised(method: Callable) -> Callable:
    """Run a model call under the model's lock: the app serves several sessions and background jobs from
    one model, and a KV cache or an eager-attention switch must not interleave with another call."""

    @functools.wraps(method)
    def locked(self: LanguageModel, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return locked


@dataclass
class CallCost:
    """What a model call cost: public calls, forward passes, tokens through the network, seconds."""

    calls: int = 0
    forward_passes: int = 0
    tokens_processed: int = 0
    tokens_generated: int = 0
    seconds: float = 0.0

    def __add__(self, other: CallCost) -> CallCost:
        return CallCost(
            self.calls + other.calls,
            self.forward_passes + other.forward_passes,
            self.tokens_processed + other.tokens_processed,
            self.tokens_generated + other.tokens_generated,
            self.seconds + other.seconds,
        )

    def __sub__(self, other: CallCost) -> CallCost:
        return CallCost(
            self.calls - other.calls,
            self.forward_passes - other.forward_passes,
            self.tokens_processed - other.tokens_processed,
            self.tokens_generated - other.tokens_generated,
            self.seconds - other.seconds,
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "forward_passes": self.forward_passes,
            "tokens_processed": self.tokens_processed,
            "tokens_generated": self.tokens_generated,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class CostMeter:
    """Running totals over the life of a model, plus the last ``keep`` calls by operation name."""

    total: CallCost = field(default_factory=CallCost)
    history: list[tuple[str, CallCost]] = field(default_factory=list)
    keep: int = 200

    def record(self, operation: str, cost: CallCost) -> None:
        self.total = self.total + cost
        self.history.append((operation, cost))
        del self.history[: -self.keep]


@dataclass
class TokenStats:
    """Per-token log-prob of the actual token and predictive entropy (nats, float32, T = 1)."""

    logprobs: np.ndarray  # (T,)
    entropies: np.ndarray  # (T,)


@dataclass
class ContinuationScores:
    logprobs: list[np.ndarray]  # one (len(target),) array per request, in request order
    stats: TokenStats | None
    cost: CallCost


@dataclass
class Generation:
    prompt_length: int
    token_ids: list[int]
    text: str
    finish_reason: str  # "eos" | "stop" | "answer" (a complete \\boxed{} with stop_on_answer) | "length"
    seed: int
    entropies: list[float] = field(default_factory=list)  # per generated token, nats at temperature 1 (§2)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class PrefixSampling:
    """Sample ``len(seeds)`` continuations after ``ids[:prefix] + context`` (``prefix`` >= 1)."""

    prefix: int
    context: tuple[int, ...]
    seeds: tuple[int, ...]


@dataclass
class SampleResult:
    generations: list[Generation]
    cost: CallCost


@dataclass
class Encoding:
    """Token ids of a text and the character offset where each token starts (``starts[0] == 0``)."""

    ids: list[int]
    starts: list[int]


class LanguageModel:
    """Scoring and sampling wrapper around a transformers causal LM (see the module docstring)."""

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
        self.lock = threading.RLock()
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token

    # ------------------------------------------------------------------ construction and facts
    @classmethod
    def load(cls, config: Any = None, progress_note: list[str] | None = None) -> LanguageModel:
        """Load from a ``ModelConfig`` (default: the embedded SmolLM2-135M-Instruct)."""
        from rredcot_viz.model.loading import ModelConfig, load_model

        loaded = load_model(config or ModelConfig(), progress_note)
        info = {
            "source": loaded.source.kind,
            "path": str(loaded.source.path),
            "gguf_file": loaded.source.gguf_file,
            "load_seconds": round(loaded.load_seconds, 2),
            "notes": loaded.notes,
        }
        return cls(
            loaded.model,
            loaded.tokenizer,
            name=loaded.source.name,
            fingerprint=loaded.fingerprint,
            device=loaded.device,
            dtype=loaded.dtype,
            quantization=loaded.quantization,
            info=info,
        )

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
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "chat_template": self.has_chat_template,
            "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
            **self.extra_info,
        }

    # ------------------------------------------------------------------ text <-> tokens
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

    # ------------------------------------------------------------------ scoring
    def token_stats(self, ids: list[int], start: int) -> TokenStats:
        """Log-prob and entropy of every token ``ids[start:]`` given what precedes it, in one pass."""
        scores = self.score_continuations(ids, [], stats_start=start, operation="token_stats")
        assert scores.stats is not None
        return scores.stats

    @_serialised
    def score_continuations(
        self,
        ids: list[int],
        requests: list[Continuation],
        *,
        stats_start: int | None = None,
        progress: ProgressFn | None = None,
        operation: str = "score_continuations",
    ) -> ContinuationScores:
        """Per-token log-probs of each request's target after ``ids[:cut] + context``, reusing one pass over
        ``ids`` (see ``packing``). With ``stats_start`` the same pass also yields ``token_stats``."""
        self._check_requests(ids, requests)
        cost = CallCost(calls=1)
        started = time.perf_counter()
        with self._guard(len(ids)), torch.inference_mode():
            cache, stats = self._prefill(ids, stats_start, cost)
            results: list[np.ndarray] = [np.empty(0)] * len(requests)
            chunks = plan_chunks(requests, self.pack_tokens)
            for done, members in enumerate(chunks, start=1):
                past = chunk_past_length(requests, members)  # non-increasing over chunks: crop, never copy
                cache.crop(past - cache.get_seq_length())
                chunk = build_chunk(ids, requests, members, past, self._mask_dtype)
                output = self._forward(
                    cost,
                    input_ids=chunk.input_ids.to(self.device),
                    position_ids=chunk.position_ids.to(self.device),
                    attention_mask=chunk.attention_mask.to(self.device),
                    cache=cache,
                    use_cache=True,
                    logits_to_keep=chunk.keep.to(self.device),
                )
                cache.crop(-chunk.input_ids.shape[1])
                logprobs = _gather_logprobs(output.logits[0], chunk.target_ids.to(self.device))
                for member, piece in zip(chunk.members, chunk.target_slices, strict=True):
                    results[member] = logprobs[piece]
                if progress:
                    progress(done, len(chunks))
        cost.seconds = time.perf_counter() - started
        self.meter.record(operation, cost)
        return ContinuationScores(results, stats, cost)

    @_serialised
    def score_continuations_naive(self, ids: list[int], requests: list[Continuation]) -> ContinuationScores:
        """Reference implementation: re-encode ``ids[:cut] + context + target`` for every request."""
        self._check_requests(ids, requests)
        cost = CallCost(calls=1)
        started = time.perf_counter()
        results = []
        with self._guard(len(ids)), torch.inference_mode():
            for request in requests:
                sequence = [*ids[: request.cut], *request.context, *request.target]
                first = request.cut + len(request.context) - 1  # position predicting the first target token
                keep = torch.arange(first, first + len(request.target), device=self.device)
                output = self._forward(
                    cost, input_ids=torch.tensor([sequence], device=self.device), logits_to_keep=keep
                )
                results.append(_gather_logprobs(output.logits[0], torch.tensor(request.target, device=self.device)))
        cost.seconds = time.perf_counter() - started
        self.meter.record("score_continuations_naive", cost)
        return ContinuationScores(results, None, cost)

    def _prefill(self, ids: list[int], stats_start: int | None, cost: CallCost) -> tuple[Any, TokenStats | None]:
        """Run ``ids`` through the model in chunks, keeping the KV cache and (optionally) token stats."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        logprob_parts: list[np.ndarray] = []
        entropy_parts: list[np.ndarray] = []
        for begin in range(0, len(ids), self.prefill_chunk):
            end = min(begin + self.prefill_chunk, len(ids))
            # logits at p predict token p + 1: stats of tokens [stats_start, len) need p in [stats_start-1, len-1)
            keep: torch.Tensor | int = 1
            if stats_start is not None:
                lo, hi = max(begin, stats_start - 1), min(end, len(ids) - 1)
                if hi > lo:
                    keep = torch.arange(lo - begin, hi - begin, device=self.device)
            output = self._forward(
                cost,
                input_ids=torch.tensor([ids[begin:end]], device=self.device),
                position_ids=torch.arange(begin, end, device=self.device)[None],
                cache=cache,
                use_cache=True,
                logits_to_keep=keep,
            )
            if isinstance(keep, torch.Tensor):
                targets = torch.tensor(ids[begin + int(keep[0]) + 1 : begin + int(keep[-1]) + 2], device=self.device)
                logprobs, entropies = _logprobs_and_entropies(output.logits[0], targets)
                logprob_parts.append(logprobs)
                entropy_parts.append(entropies)
        if stats_start is None:
            return cache, None
        empty = np.empty(0)
        logprobs = np.concatenate(logprob_parts) if logprob_parts else empty
        entropies = np.concatenate(entropy_parts) if entropy_parts else empty
        return cache, TokenStats(logprobs, entropies)

    # ------------------------------------------------------------------ gradients and attention
    def input_embeddings(self, ids: list[int]) -> torch.Tensor:
        """Float32 copy of the input embeddings of ``ids`` (T, d), detached: a leaf for attribution gradients."""
        with torch.no_grad():
            layer = self.model.get_input_embeddings()
            return layer(torch.tensor([ids], device=self.device))[0].float().clone()

    @_serialised
    def target_logprob_from_embeddings(self, embeddings: torch.Tensor, target: list[int]) -> torch.Tensor:
        """Differentiable sum of log p(target) for each row of ``embeddings`` (B, T, d) whose last
        ``len(target)`` positions hold the target tokens; returns (B,)."""
        cost = CallCost(calls=1)
        started = time.perf_counter()
        n = len(target)
        keep = torch.arange(embeddings.shape[1] - n - 1, embeddings.shape[1] - 1, device=self.device)
        dtype = next(self.model.parameters()).dtype
        dtype = dtype if dtype.is_floating_point else torch.float32
        with self._guard(embeddings.shape[1]):
            cost.forward_passes += 1
            cost.tokens_processed += embeddings.shape[0] * embeddings.shape[1]
            output = self.model(inputs_embeds=embeddings.to(dtype), logits_to_keep=keep)
        logprobs = torch.log_softmax(output.logits.float(), dim=-1)  # (B, n, V)
        index = torch.tensor(target, device=self.device)[None, :, None].expand(embeddings.shape[0], n, 1)
        cost.seconds = time.perf_counter() - started
        self.meter.record("gradient_forward", cost)
        return logprobs.gather(-1, index)[..., 0].sum(-1)

    @_serialised
    def attention_to_keys(self, ids: list[int], queries: list[int]) -> np.ndarray:
        """Attention each key position receives from the ``queries`` positions, averaged over queries, heads
        and layers (T,). Runs with eager attention (SDPA does not return weights), one layer at a time."""
        attention_layers = [
            m for m in self.model.modules() if type(m).__name__.endswith("Attention") and hasattr(m, "layer_idx")
        ]
        totals: list[torch.Tensor] = []
        query_index = torch.tensor(queries, device=self.device)

        def capture(_module: Any, _inputs: Any, output: Any) -> None:
            weights = output[1]  # (B, H, Q, K), present under eager attention
            totals.append(weights[0][:, query_index, :].float().mean(dim=(0, 1)))

        previous = self.model.config._attn_implementation
        hooks = [layer.register_forward_hook(capture) for layer in attention_layers]
        cost = CallCost(calls=1, forward_passes=1, tokens_processed=len(ids))
        started = time.perf_counter()
        try:
            self.model.set_attn_implementation("eager")
            with self._guard(len(ids)), torch.inference_mode():
                self.model(torch.tensor([ids], device=self.device), logits_to_keep=1)
        finally:
            for hook in hooks:
                hook.remove()
            self.model.set_attn_implementation(previous)
        cost.seconds = time.perf_counter() - started
        self.meter.record("attention", cost)
        if len(totals) != len(attention_layers) or not totals:
            raise RuntimeError(f"captured attention from {len(totals)} of {len(attention_layers)} layers")
        return torch.stack(totals).mean(dim=0).double().cpu().numpy()

    # ------------------------------------------------------------------ sampling
    @_serialised
    def sample(
        self,
        prompts: list[list[int]],
        seeds: list[int],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
    ) -> SampleResult:
        """Sample one continuation per prompt, row ``i`` seeded with ``seeds[i]``; batched by ``batch_size``."""
        config = config or SamplingConfig()
        if len(prompts) != len(seeds):
            raise ValueError(f"got {len(prompts)} prompts but {len(seeds)} seeds; pass one seed per prompt")
        for prompt in prompts:
            if len(prompt) >= self.context_length:
                raise ContextLengthError(len(prompt), self.context_length, "the sampling prompt")
        cost = CallCost(calls=1)
        started = time.perf_counter()
        generations: list[Generation] = []
        batches = [
            range(i, min(i + config.batch_size, len(prompts))) for i in range(0, len(prompts), config.batch_size)
        ]
        with self._guard(max((len(p) for p in prompts), default=0)), torch.inference_mode():
            for done, rows in enumerate(batches, start=1):
                generations.extend(
                    self._sample_batch([prompts[i] for i in rows], [seeds[i] for i in rows], config, cost)
                )
                if progress:
                    progress(done, len(batches))
        cost.seconds = time.perf_counter() - started
        self.meter.record("sample", cost)
        return SampleResult(generations, cost)

    def _sample_batch(
        self, prompts: list[list[int]], seeds: list[int], config: SamplingConfig, cost: CallCost
    ) -> list[Generation]:
        """One batch. The prompts' common prefix (a system prompt, few-shot examples) runs once, then each
        distinct rest once (left-padded after it), so a prompt sampled n times is prefilled once; then every
        row runs the token-by-token loop, whose steps cost about the same for 1 row as for 16 on a CPU."""
        common = _common_prefix_length(prompts)
        rests = [tuple(p[common:]) for p in prompts]
        distinct = list(dict.fromkeys(rests))
        rows = torch.tensor([distinct.index(rest) for rest in rests], device=self.device)
        cache = None
        if common:
            head = torch.tensor([prompts[0][:common]], device=self.device)
            cache = self._forward(cost, input_ids=head, use_cache=True, logits_to_keep=1).cache
            cache.batch_repeat_interleave(len(distinct))
        width = max(len(r) for r in distinct)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(r)) + list(r) for r in distinct], device=self.device)
        rest_mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in distinct], device=self.device)
        mask = torch.cat([torch.ones(len(distinct), common, dtype=rest_mask.dtype, device=self.device), rest_mask], 1)
        positions = common + (rest_mask.cumsum(-1) - 1).clamp(min=0)
        output = self._forward(
            cost,
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions,
            cache=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        output.cache.batch_select_indices(rows)  # one cache row per sample
        budget = min(config.max_new_tokens, self.context_length - common - width)
        produced, reasons, entropies = self._decode(
            output.logits[rows, -1, :], output.cache, mask[rows], positions[rows], seeds, budget, config, cost
        )
        return [
            Generation(len(prompt), ids, self._decode_generation(ids, config.stop_strings), reason, int(seed), h)
            for prompt, ids, reason, seed, h in zip(prompts, produced, reasons, seeds, entropies, strict=True)
        ]

    @_serialised
    def sample_after_prefixes(
        self,
        ids: list[int],
        requests: list[PrefixSampling],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
    ) -> list[list[Generation]]:
        """Sample continuations after many prefixes of one sequence, prefilling the sequence only once.

        Each request samples one row per seed after ``ids[:prefix] + context``. The sequence's KV cache is
        computed once; requests are served longest prefix first from a copy cropped to the prefix, so the
        total prefill is one pass over ``ids`` plus the contexts (not one pass per rollout)."""
        config = config or SamplingConfig()
        for request in requests:
            if not 1 <= request.prefix <= len(ids):
                raise ValueError(f"sampling prefix {request.prefix} is outside 1..{len(ids)}")
        if len(ids) >= self.context_length:
            raise ContextLengthError(len(ids), self.context_length, "the sampling prefix")
        cost = CallCost(calls=1)
        started = time.perf_counter()
        results: list[list[Generation]] = [[] for _ in requests]
        order = sorted(range(len(requests)), key=lambda i: -requests[i].prefix)
        with self._guard(len(ids)), torch.inference_mode():
            shared, _ = self._prefill(ids, None, cost)
            for done, index in enumerate(order, start=1):
                request = requests[index]
                shared.crop(request.prefix - 1 - shared.get_seq_length())
                head = [ids[request.prefix - 1], *request.context]  # repeat the last prefix token (see packing)
                for chunk in range(0, len(request.seeds), config.batch_size):
                    seeds = list(request.seeds[chunk : chunk + config.batch_size])
                    cache = copy.deepcopy(shared)
                    output = self._forward(
                        cost,
                        input_ids=torch.tensor([head], device=self.device),
                        position_ids=torch.arange(
                            request.prefix - 1, request.prefix - 1 + len(head), device=self.device
                        )[None],
                        cache=cache,
                        use_cache=True,
                        logits_to_keep=1,
                    )
                    cache.batch_repeat_interleave(len(seeds))
                    length = request.prefix + len(request.context)
                    mask = torch.ones(len(seeds), length, dtype=torch.long, device=self.device)
                    positions = torch.full((len(seeds), 1), length - 1, device=self.device)
                    budget = min(config.max_new_tokens, self.context_length - length)
                    logits = output.logits[:, -1, :].expand(len(seeds), -1)
                    produced, reasons, entropies = self._decode(
                        logits, cache, mask, positions, seeds, budget, config, cost
                    )
                    results[index].extend(
                        Generation(length, row, self._decode_generation(row, config.stop_strings), reason, int(seed), h)
                        for row, reason, seed, h in zip(produced, reasons, seeds, entropies, strict=True)
                    )
                if progress:
                    progress(done, len(order))
        cost.seconds = time.perf_counter() - started
        self.meter.record("sample_after_prefixes", cost)
        return results

    def _decode(
        self,
        logits: torch.Tensor,
        cache: Any,
        mask: torch.Tensor,
        positions: torch.Tensor,
        seeds: list[int],
        budget: int,
        config: SamplingConfig,
        cost: CallCost,
    ) -> tuple[list[list[int]], list[str], list[list[float]]]:
        """The token-by-token loop shared by all samplers; rows that finish leave the batch. Also returns each
        generated token's predictive entropy at temperature 1 (what the segmenters read), from the same logits."""
        generators = [torch.Generator().manual_seed(int(seed)) for seed in seeds]
        eos = self._eos_ids()
        produced: list[list[int]] = [[] for _ in seeds]
        entropies: list[list[float]] = [[] for _ in seeds]
        reasons = ["length"] * len(seeds)
        active = list(range(len(seeds)))
        for step in range(budget):
            picks = select_tokens(logits.cpu(), config, [generators[r] for r in active]).tolist()
            step_entropies = _entropies(logits).tolist()
            still: list[int] = []
            for slot, row in enumerate(active):
                token = picks[slot]
                if token in eos:
                    reasons[row] = "eos"
                    continue
                produced[row].append(token)
                entropies[row].append(step_entropies[slot])
                cost.tokens_generated += 1
                reason = self._stop_reason(produced[row], config)
                if reason:
                    reasons[row] = reason
                    continue
                still.append(slot)
            if not still or step == budget - 1:
                break
            keep = torch.tensor(still, device=self.device)
            if len(still) < len(active):
                cache.batch_select_indices(keep)
                mask = mask[keep]
                positions = positions[keep]
            active = [active[slot] for slot in still]
            mask = torch.cat([mask, torch.ones(len(active), 1, dtype=mask.dtype, device=self.device)], dim=1)
            positions = positions[:, -1:] + 1
            next_ids = torch.tensor([[produced[row][-1]] for row in active], device=self.device)
            output = self._forward(
                cost, input_ids=next_ids, attention_mask=mask, position_ids=positions, cache=cache, use_cache=True
            )
            logits = output.logits[:, -1, :]
        return produced, reasons, entropies

    def _stop_reason(self, produced: list[int], config: SamplingConfig) -> str | None:
        if not (config.stop_strings or config.stop_on_answer):
            return None
        tail = self.tokenizer.decode(produced[-16:], skip_special_tokens=True)
        if any(stop in tail for stop in config.stop_strings):
            return "stop"
        if config.stop_on_answer and (
            ("}" in tail and find_boxed(self.decode(produced))) or _ANSWER_STATED.search(tail)
        ):
            return "answer"
        return None

    def _decode_generation(self, ids: list[int], stops: tuple[str, ...]) -> str:
        text = self.decode(ids)
        for stop in stops:  # keep the text up to and including the first stop string (SRPO keeps delimiters)
            at = text.find(stop)
            if at >= 0:
                text = text[: at + len(stop)]
        return text

    def _eos_ids(self) -> set[int]:
        ids = {self.tokenizer.eos_token_id}
        generation_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        if isinstance(generation_eos, int):
            ids.add(generation_eos)
        elif isinstance(generation_eos, list):
            ids.update(generation_eos)
        return {i for i in ids if i is not None}

    # ------------------------------------------------------------------ plumbing
    @property
    def _mask_dtype(self) -> torch.dtype:
        dtype = next(self.model.parameters()).dtype
        return dtype if dtype.is_floating_point else torch.float32

    def _check_requests(self, ids: list[int], requests: list[Continuation]) -> None:
        longest = max((r.cut + len(r.context) + len(r.target) for r in requests), default=len(ids))
        if max(longest, len(ids)) > self.context_length:
            raise ContextLengthError(max(longest, len(ids)), self.context_length)
        for request in requests:
            if not 1 <= request.cut <= len(ids):
                raise ValueError(f"continuation cut {request.cut} is outside 1..{len(ids)}")
            if not request.target:
                raise ValueError("a continuation needs at least one target token to score")

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


def _common_prefix_length(prompts: list[list[int]]) -> int:
    """Tokens every prompt starts with, leaving each at least one token of its own (whose logits start it)."""
    shortest = min(len(p) for p in prompts)
    length = 0
    while length < shortest - 1 and all(p[length] == prompts[0][length] for p in prompts):
        length += 1
    return length


def _gather_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> np.ndarray:
    """log p(target_i) under the softmax of logits[i] (N, V), computed in float32: the target's logit minus
    the log-normaliser, with no (N, V) log-softmax kept."""
    logits = logits.float()
    logprobs = logits.gather(-1, targets[:, None])[:, 0] - torch.logsumexp(logits, dim=-1)
    return logprobs.double().cpu().numpy()


def _logprobs_and_entropies(logits: torch.Tensor, targets: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """``_gather_logprobs`` and ``_entropies`` of the same logits from one log-softmax."""
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    entropies = -(logprobs.exp() * logprobs).sum(-1)
    return logprobs.gather(-1, targets[:, None])[:, 0].double().cpu().numpy(), entropies.double().cpu().numpy()


def _entropies(logits: torch.Tensor) -> np.ndarray:
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    return (-(logprobs.exp() * logprobs).sum(-1)).double().cpu().numpy()
