"""Scoring calls: per-token log-probs and entropies of a sequence, and many continuations scored after many
prefixes of one sequence with the prefix computation reused (``packing``); ``score_branches`` does the same for
several sequences that share a stem (a group of rollouts of one prompt), the stem encoded once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from rredcot_viz.errors import ContextLengthError
from rredcot_viz.model.core import ModelCore, ProgressFn
from rredcot_viz.model.meter import heartbeat, model_call
from rredcot_viz.model.packing import Continuation, build_chunk, chunk_past_length, plan_chunks
from rredcot_viz.types import BranchScores, CallCost, ContinuationScores, TokenStats


class Scoring(ModelCore):
    def token_stats(self, ids: list[int], start: int) -> TokenStats:
        """Log-prob and entropy of every token ``ids[start:]`` given what precedes it, in one pass."""
        scores = self.score_continuations(ids, [], stats_start=start, operation="token_stats")
        assert scores.stats is not None
        return scores.stats

    @model_call("score_continuations")
    def score_continuations(
        self,
        ids: list[int],
        requests: list[Continuation],
        *,
        stats_start: int | None = None,
        progress: ProgressFn | None = None,
        on_stats: Callable[[TokenStats], None] | None = None,
        on_chunk: Callable[[list[int], list[np.ndarray]], None] | None = None,
        cost: CallCost,
    ) -> ContinuationScores:
        """Per-token log-probs of each request's target after ``ids[:cut] + context``, reusing one pass over
        ``ids`` (see ``packing``). With ``stats_start`` the same pass also yields ``token_stats``.

        ``on_stats(stats)`` and ``on_chunk(request indices, their log-probs)`` hand over results as they arrive,
        so a caller can keep them even if the call is cancelled part way (``progress`` may raise)."""
        self._check_requests(ids, requests)
        with self._guard(len(ids)), torch.inference_mode():
            cache, stats = self._prefill(ids, stats_start, cost)
            if stats is not None and on_stats:
                on_stats(stats)
            results = self._score_packed(cache, ids, requests, cost, progress, on_chunk)
        return ContinuationScores(results, stats, cost)

    @model_call("score_branches")
    def score_branches(
        self,
        stem: list[int],
        tails: list[list[int]],
        plan: Callable[[int, TokenStats | None], list[Continuation]],
        *,
        with_stats: bool = False,
        progress: ProgressFn | None = None,
        cost: CallCost,
    ) -> BranchScores:
        """``score_continuations`` for several sequences ``stem + tail`` at once, the stem encoded once.

        ``plan(branch, stats)`` names a branch's requests (cuts count tokens of ``stem + tail``; ``stats``: the
        tail's log-probs and entropies when ``with_stats``, else None); the tail is run after the stem's cache (the
        whole tail with stats, else only up to its largest cut), the requests are packed after the branch's own
        cache, and the cache is cropped back to the stem for the next branch.
        Requests cut inside the stem (the same for every branch, e.g. a prompt-only state) are scored once, after
        the last branch. ``progress(done, len(tails) + 1)`` after each branch and at the end (it may raise)."""
        if not stem:
            raise ValueError("score_branches needs a stem of at least one token")
        self._check_length(len(stem) + max(map(len, tails), default=0))
        base = len(stem) - 1  # the stem's last token is run with each tail, so its stats come from the branch pass
        logprobs: list[list[np.ndarray]] = []
        branch_stats: list[TokenStats | None] = []
        shared: dict[Continuation, list[tuple[int, int]]] = {}  # a stem request -> the (branch, index) asking it
        with self._guard(len(stem)), torch.inference_mode():
            cache, _ = self._prefill(stem[:-1], None, cost)
            for branch, tail in enumerate(tails):
                ids = [*stem, *tail]
                stats = None
                if with_stats:  # the whole tail, for its stats, before the plan that reads them
                    _, stats = self._prefill(ids, len(stem), cost, cache=cache, start=base)
                requests = plan(branch, stats)
                self._check_requests(ids, requests)
                own = [i for i, request in enumerate(requests) if request.cut > len(stem)]
                if not with_stats:  # only as far as the branch's last block needs (its largest cut - 1)
                    reach = max((requests[i].cut - 1 for i in own), default=base)
                    self._prefill(ids[:reach], None, cost, cache=cache, start=base)
                for i in sorted(set(range(len(requests))) - set(own)):
                    shared.setdefault(requests[i], []).append((branch, i))
                scores = self._score_packed(cache, ids, [requests[i] for i in own], cost)
                found: list[np.ndarray] = [np.empty(0)] * len(requests)
                for i, score in zip(own, scores, strict=True):
                    found[i] = score
                logprobs.append(found)
                branch_stats.append(stats)
                cache.crop(base - cache.get_seq_length())
                if progress:
                    progress(branch + 1, len(tails) + 1)
            unique = list(shared)
            for request, score in zip(unique, self._score_packed(cache, stem, unique, cost), strict=True):
                for branch, i in shared[request]:
                    logprobs[branch][i] = score
            if progress:
                progress(len(tails) + 1, len(tails) + 1)
        return BranchScores(logprobs, branch_stats, cost)

    @model_call("hidden_states")
    def hidden_states(self, ids: list[int], positions: list[int], *, cost: CallCost) -> np.ndarray:
        """The residual stream of every layer (0: the embeddings, L: the last layer's normed output) at each of
        ``positions`` of ``ids``, from one pass over ``ids[: max(positions) + 1]`` in prefill chunks: (L+1, P, D)
        float32. What a value probe reads (``estimators/probe.py``); no token is sampled or scored."""
        from transformers import DynamicCache

        if not positions:
            return np.zeros((self.model.config.num_hidden_layers + 1, 0, self.model.config.hidden_size), np.float32)
        end = max(positions) + 1
        if min(positions) < 0 or end > len(ids):
            raise ValueError(f"hidden-state positions must lie in 0..{len(ids) - 1}, got {min(positions)}..{end - 1}")
        self._check_length(end)
        found: dict[int, np.ndarray] = {}  # position -> (L+1, D)
        with self._guard(end), torch.inference_mode():
            cache = DynamicCache(config=self.model.config)
            for begin in range(0, end, self.prefill_chunk):
                stop = min(begin + self.prefill_chunk, end)
                output = self._forward(
                    cost,
                    input_ids=torch.tensor([ids[begin:stop]], device=self.device),
                    position_ids=torch.arange(begin, stop, device=self.device)[None],
                    cache=cache,
                    use_cache=True,
                    logits_to_keep=1,
                    output_hidden_states=True,
                )
                wanted = [p for p in set(positions) if begin <= p < stop]
                if wanted:
                    index = torch.tensor([p - begin for p in wanted], device=self.device)
                    layers = torch.stack([h[0, index] for h in output.hidden_states])  # (L+1, w, D)
                    for column, position in enumerate(wanted):
                        found[position] = layers[:, column].float().cpu().numpy()
        return np.stack([found[p] for p in positions], axis=1)

    def _score_packed(
        self,
        cache: Any,
        ids: list[int],
        requests: list[Continuation],
        cost: CallCost,
        progress: ProgressFn | None = None,
        on_chunk: Callable[[list[int], list[np.ndarray]], None] | None = None,
    ) -> list[np.ndarray]:
        """The requests' target log-probs, packed in chunks after ``cache`` (which holds at least ``ids`` up to
        the largest cut - 1, and is left cropped below the smallest)."""
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
            if on_chunk:
                on_chunk(list(chunk.members), [results[member] for member in chunk.members])
            if progress:
                progress(done, len(chunks))
            heartbeat(cost)  # a job asked to stop stops here, after a whole chunk (what it scored is kept)
        return results

    @model_call("score_continuations_naive")
    def score_continuations_naive(
        self, ids: list[int], requests: list[Continuation], *, cost: CallCost
    ) -> ContinuationScores:
        """Reference implementation: re-encode ``ids[:cut] + context + target`` for every request."""
        self._check_requests(ids, requests)
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
        return ContinuationScores(results, None, cost)

    def _prefill(
        self, ids: list[int], stats_start: int | None, cost: CallCost, cache: Any = None, start: int = 0
    ) -> tuple[Any, TokenStats | None]:
        """Run ``ids[start:]`` through the model in chunks after ``cache`` (which holds ``ids[:start]``; a new one
        when None), keeping the KV cache and (optionally) the stats of tokens ``stats_start..``, which must be
        predicted by positions from ``start`` on."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config) if cache is None else cache
        logprob_parts: list[np.ndarray] = []
        entropy_parts: list[np.ndarray] = []
        for begin in range(start, len(ids), self.prefill_chunk):
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

    def _check_length(self, length: int) -> None:
        if length > self.context_length:
            raise ContextLengthError(length, self.context_length)

    def _check_requests(self, ids: list[int], requests: list[Continuation]) -> None:
        longest = max((r.cut + len(r.context) + len(r.target) for r in requests), default=len(ids))
        self._check_length(max(longest, len(ids)))
        for request in requests:
            if not 1 <= request.cut <= len(ids):
                raise ValueError(f"continuation cut {request.cut} is outside 1..{len(ids)}")
            if not request.target:
                raise ValueError("a continuation needs at least one target token to score")


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
