"""Sampling calls: seeded, batched sampling from prompts, and after many prefixes of one sequence. A batch's
common prompt prefix and each distinct prompt are prefilled once; rows that finish leave the batch."""

from __future__ import annotations

import copy
import re
from typing import Any

import torch

from rredcot_viz.errors import ContextLengthError
from rredcot_viz.model.core import ModelCore, ProgressFn
from rredcot_viz.model.meter import heartbeat, model_call
from rredcot_viz.model.sampling import SamplingConfig, select_tokens
from rredcot_viz.model.score import _entropies
from rredcot_viz.traces.answers import find_boxed
from rredcot_viz.types import CallCost, Generation, PrefixSampling, SampleResult

_ANSWER_STATED = re.compile(r"answer is:?\s*\$?-?\d[\d,]*(?:\.\d+)?\s*(?:\.\s|\n)", re.IGNORECASE)


class Generating(ModelCore):
    @model_call("sample")
    def sample(
        self,
        prompts: list[list[int]],
        seeds: list[int],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
        cost: CallCost,
    ) -> SampleResult:
        """Sample one continuation per prompt, row ``i`` seeded with ``seeds[i]``; batched by ``batch_size``."""
        config = config or SamplingConfig()
        if len(prompts) != len(seeds):
            raise ValueError(f"got {len(prompts)} prompts but {len(seeds)} seeds; pass one seed per prompt")
        for prompt in prompts:
            if len(prompt) >= self.context_length:
                raise ContextLengthError(len(prompt), self.context_length, "the sampling prompt")
        generations: list[Generation] = []
        batches = [
            range(i, min(i + config.batch_size, len(prompts))) for i in range(0, len(prompts), config.batch_size)
        ]
        with self._guard(max((len(p) for p in prompts), default=0)), torch.inference_mode():
            for done, rows in enumerate(batches, start=1):
                generations.extend(
                    self._sample_batch(
                        [prompts[i] for i in rows], [seeds[i] for i in rows], config, cost, (rows[0], len(prompts))
                    )
                )
                if progress:
                    progress(done, len(batches))
        return SampleResult(generations, cost)

    def _sample_batch(
        self,
        prompts: list[list[int]],
        seeds: list[int],
        config: SamplingConfig,
        cost: CallCost,
        done_rows: tuple[int, int] = (0, 0),
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
            output.logits[rows, -1, :],
            output.cache,
            mask[rows],
            positions[rows],
            seeds,
            budget,
            config,
            cost,
            done_rows,
        )
        return [
            Generation(len(prompt), ids, self._decode_generation(ids, config.stop_strings), reason, int(seed), h)
            for prompt, ids, reason, seed, h in zip(prompts, produced, reasons, seeds, entropies, strict=True)
        ]

    @model_call("sample_after_prefixes")
    def sample_after_prefixes(
        self,
        ids: list[int],
        requests: list[PrefixSampling],
        config: SamplingConfig | None = None,
        *,
        progress: ProgressFn | None = None,
        cost: CallCost,
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
        results: list[list[Generation]] = [[] for _ in requests]
        order = sorted(range(len(requests)), key=lambda i: -requests[i].prefix)
        rows_done, rows_total = 0, sum(len(request.seeds) for request in requests)
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
                        logits, cache, mask, positions, seeds, budget, config, cost, (rows_done, rows_total)
                    )
                    rows_done += len(seeds)
                    results[index].extend(
                        Generation(length, row, self._decode_generation(row, config.stop_strings), reason, int(seed), h)
                        for row, reason, seed, h in zip(produced, reasons, seeds, entropies, strict=True)
                    )
                if progress:
                    progress(done, len(order))
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
        done_rows: tuple[int, int] = (0, 0),
    ) -> tuple[list[list[int]], list[str], list[list[float]]]:
        """The token-by-token loop shared by all samplers; rows that finish leave the batch. Also returns each
        generated token's predictive entropy at temperature 1 (what the segmenters read), from the same logits.
        Each step sends a ``heartbeat`` (``done_rows``: the call's rows finished before this batch, and in all), so a
        job shows its tokens as they come and a cancellation lands within one step."""
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
            running = len(still) if step < budget - 1 else 0  # at the cap every row is done
            heartbeat(cost, done_rows[0] + len(seeds) - running, done_rows[1] or len(seeds))
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

    def finish_generation(
        self, prompt_length: int, sampled: list[int], seed: int, config: SamplingConfig, finish_reason: str
    ) -> Generation:
        """A continuation sampled elsewhere (an inference server), cut where this sampler's loop would have
        stopped it: at an end-of-sequence token, a stop string or a stated answer; else ``finish_reason``."""
        eos = self._eos_ids()
        kept: list[int] = []
        for token in sampled:
            if token in eos:
                finish_reason = "eos"
                break
            kept.append(token)
            reason = self._stop_reason(kept, config)
            if reason:
                finish_reason = reason
                break
        return Generation(prompt_length, kept, self._decode_generation(kept, config.stop_strings), finish_reason, seed)

    def _stop_reason(self, produced: list[int], config: SamplingConfig) -> str | None:
        if not self.stop_early or not (config.stop_strings or config.stop_on_answer):
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
        if not self.stop_early:
            return set()
        ids = {self.tokenizer.eos_token_id}
        generation_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        if isinstance(generation_eos, int):
            ids.add(generation_eos)
        elif isinstance(generation_eos, list):
            ids.update(generation_eos)
        return {i for i in ids if i is not None}


def _common_prefix_length(prompts: list[list[int]]) -> int:
    """Tokens every prompt starts with, leaving each at least one token of its own (whose logits start it)."""
    shortest = min(len(p) for p in prompts)
    length = 0
    while length < shortest - 1 and all(p[length] == prompts[0][length] for p in prompts):
        length += 1
    return length
