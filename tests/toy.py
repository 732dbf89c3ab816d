"""A toy language model whose next-token probabilities are set exactly by the test.

Tokens are single ASCII characters (id = ord). A ``rule(context) -> {char: probability}`` gives the
probability of some next characters after a context string; the rest of the mass is spread uniformly over
the other characters. It implements the part of ``LanguageModel`` the engine uses, so estimator values can
be checked against hand-computed numbers to 1e-9.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from rredcot_viz.model.meter import CostMeter, model_call
from rredcot_viz.model.packing import Continuation
from rredcot_viz.types import CallCost, ContinuationScores, Encoding, TokenStats

VOCAB = 128
Rule = Callable[[str], dict[str, float]]


class ToyLanguageModel:
    def __init__(self, rule: Rule, name: str = "toy"):
        self.rule = rule
        self.name = name
        self.fingerprint = f"toy-{name}"
        self.quantization = "none"
        self.meter = CostMeter()
        self.lock = threading.RLock()
        self.context_length = 100_000

    # ------------------------------------------------------------------ text
    def format_prompt(self, question: str, *, system: str | None = None, chat: bool = True) -> str:
        return f"Q {question} A "

    def encode_prompt(self, text: str) -> list[int]:
        return self.encode(text)

    def encode(self, text: str) -> list[int]:
        ids = [ord(c) for c in text]
        assert all(i < VOCAB for i in ids), "the toy model speaks ASCII only"
        return ids

    def encode_with_offsets(self, text: str) -> Encoding:
        return Encoding(self.encode(text), list(range(len(text))))

    def decode(self, ids: list[int]) -> str:
        return "".join(chr(i) for i in ids)

    # ------------------------------------------------------------------ probabilities
    def distribution(self, context: list[int]) -> np.ndarray:
        fixed = self.rule(self.decode(context))
        assert sum(fixed.values()) < 1.0, "a toy rule must leave probability mass for the other characters"
        probs = np.full(VOCAB, (1.0 - sum(fixed.values())) / (VOCAB - len(fixed)))
        for char, p in fixed.items():
            probs[ord(char)] = p
        return probs

    def logprob(self, context: list[int], token: int) -> float:
        return float(np.log(self.distribution(context)[token]))

    def token_stats(self, ids: list[int], start: int) -> TokenStats:
        return self.score_continuations(ids, [], stats_start=start).stats

    @model_call("score_continuations")
    def score_continuations(
        self,
        ids,
        requests: list[Continuation],
        *,
        stats_start=None,
        progress=None,
        on_stats=None,
        on_chunk=None,
        cost: CallCost,
    ) -> ContinuationScores:
        cost.forward_passes += 1
        cost.tokens_processed += len(ids)
        stats = None
        if stats_start is not None:
            dists = [self.distribution(ids[:j]) for j in range(stats_start, len(ids))]
            logprobs = np.array([np.log(d[ids[j]]) for d, j in zip(dists, range(stats_start, len(ids)), strict=True)])
            entropies = np.array([-(d * np.log(d)).sum() for d in dists])
            stats = TokenStats(logprobs, entropies)
            if on_stats:
                on_stats(stats)
        results = []
        for index, request in enumerate(requests):
            sequence = [*ids[: request.cut], *request.context]
            scores = []
            for token in request.target:
                scores.append(self.logprob(sequence, token))
                sequence.append(token)
            results.append(np.array(scores))
            cost.tokens_processed += request.block_length
            if on_chunk:  # one request per chunk
                on_chunk([index], [results[-1]])
        return ContinuationScores(results, stats, cost)


class ToySampler(ToyLanguageModel):
    """A toy model that also samples: from a context, a rollout is correct with probability
    ``success(context)``, truncated (no answer, token cap) with probability ``truncation``, else wrong.
    Each rollout's outcome is a deterministic function of its seed."""

    def __init__(self, success: Callable[[str], float], truncation: float = 0.0, answer: str = "7"):
        super().__init__(lambda context: {}, name="sampler")
        self.success, self.truncation, self.answer = success, truncation, answer

    def sample_after_prefixes(self, ids, requests, config=None, *, progress=None):
        from rredcot_viz.types import Generation

        cost = CallCost(calls=1)
        results = []
        for request in requests:
            context = self.decode([*ids[: request.prefix], *request.context])
            rows = []
            for seed in request.seeds:
                draw = np.random.default_rng(seed).random()
                if draw < self.truncation:
                    text, reason = "and then we keep going and going", "length"
                elif draw < self.truncation + (1 - self.truncation) * self.success(context):
                    text, reason = f" so the answer is \\boxed{{{self.answer}}}.", "answer"
                else:
                    text, reason = " so the answer is \\boxed{0}.", "answer"
                if context.endswith("\\boxed{"):  # forced answer: only the answer and the closing brace
                    text, reason = text.split("{", 1)[1].rstrip("."), "stop"
                rows.append(Generation(request.prefix, self.encode(text), text, reason, int(seed)))
                cost.tokens_generated += len(text)
            results.append(rows)
        self.meter.record("sample_after_prefixes", cost)
        return results


def planted_success(context: str) -> float:
    """A rollout's success rate for ``ToySampler``: 0.9 from any prefix without the planted error "XX", else 0."""
    response = context.split(" A ", 1)[1] if " A " in context else ""
    return 0.0 if "XX" in response else 0.9
