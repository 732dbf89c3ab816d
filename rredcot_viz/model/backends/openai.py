"""``openai``: rollouts from any OpenAI-compatible completions server (vLLM, SGLang, llama.cpp's server).

Prompts go out as token ids (the completions API takes a list of ints as ``prompt``), so the server sees
exactly the tokens the local model would; the sampled token ids come back (vLLM's ``return_token_ids``), and
each rollout is cut where the local sampler would have stopped it (end of sequence, a stop string, a stated
answer), so a rollout reads, grades and stores the same whichever backend drew it. One request per rollout,
seeded with the rollout's own seed (an engine that honours ``seed`` gives the same rollout again), at most
``concurrency`` in flight; the server batches them.

Before the first request, a probe scores a fixed text through the server (``prompt_logprobs``) and through
the loaded model; a mean difference above ``tolerance`` means another model or tokenizer, and sampling stops
with an error naming both. Failed requests (no connection, a timeout, HTTP 408/429/5xx) are retried with
exponential backoff; the cost meter counts every call's tokens and seconds like a local call's.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rredcot_viz.errors import ContextLengthError, SamplerError, SamplerMismatchError
from rredcot_viz.model.backends.base import Sampler
from rredcot_viz.model.backends.spec import SamplerConfig, samplers
from rredcot_viz.model.meter import model_call
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.settings import setting
from rredcot_viz.types import CallCost, Generation, PrefixSampling, SampleResult, content_key

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.model.lm import LanguageModel

PROBE_TEXT = (
    "Question: A train leaves at 9:15 and arrives at 11:40. How long is the trip?\n"
    "The trip takes 2 hours and 25 minutes, because 11:40 - 9:15 = 2:25. So the answer is \\boxed{2:25}."
)
RETRIED_STATUS = {408, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class OpenAIConfig(SamplerConfig):
    url: str = setting("http://127.0.0.1:8000/v1", "base URL of the OpenAI-compatible server (vLLM, SGLang, "
                       "llama.cpp); /v1 is added to a bare host")  # fmt: skip
    model: str | None = setting(None, "served model name (none: the server's only model)")
    api_key_env: str | None = setting(None, "environment variable holding the API key (none: no key is sent)",
                                      advanced=True)  # fmt: skip
    timeout: float = setting(600.0, "seconds to wait for one rollout's answer", low=0.001, advanced=True)
    retries: int = setting(3, "further tries after no connection, a timeout or HTTP 408/429/5xx", low=0,
                           advanced=True)  # fmt: skip
    backoff: float = setting(1.0, "seconds before the first retry, doubled before each next one", low=0.0,
                             advanced=True)  # fmt: skip
    concurrency: int = setting(16, "requests in flight at once (the server batches them)", low=1, advanced=True)
    tolerance: float = setting(0.1, "probe: the largest mean |log-prob difference| (nats) accepted between the "
                               "server's model and the loaded one", low=0.0, advanced=True)  # fmt: skip
    check_model: bool = setting(True, "score a fixed text on the server before sampling and refuse another "
                                "model (needs prompt_logprobs, as vLLM has)", advanced=True)  # fmt: skip


@dataclass(frozen=True)
class ProbeResult:
    """The probe's comparison of the server's and the loaded model's log-probs on ``PROBE_TEXT``."""

    server_model: str
    tokens: int
    mean_difference: float
    max_difference: float
    local_digest: str
    server_digest: str

    def line(self) -> str:
        return (
            f"{self.server_model}: mean |Δ log-prob| {self.mean_difference:.2g} nats (max {self.max_difference:.2g}) "
            f"over {self.tokens} probe tokens"
        )


@samplers.register("openai", aliases=("vllm",))
class OpenAISampler(Sampler):
    """Rollouts from an OpenAI-compatible server, checked against the loaded model before the first one."""

    name = "openai"
    Config = OpenAIConfig
    remote = True
    config: OpenAIConfig

    def __init__(self, lm: LanguageModel, config: OpenAIConfig | None = None, **overrides: Any):
        super().__init__(lm, config, **overrides)
        self.base_url = _base_url(self.config.url)
        self.lock = threading.RLock()  # ``model_call`` serialises this sampler's calls, as a model's
        self.meter = lm.meter  # server calls count in the loaded model's meter and in ``measure`` blocks
        self.probe: ProbeResult | None = None
        self._served: str | None = None

    # ------------------------------------------------------------------ the check
    def check(self) -> str:
        if not self.config.check_model:
            return f"openai: {self.served_model} at {self.base_url} (not checked against {self.lm.name})"
        if self.probe is None:
            self.probe = self._probe()
        return f"openai: {self.probe.line()} at {self.base_url}"

    @property
    def served_model(self) -> str:
        """The model name sent with each request: the configured one, else the server's only model."""
        if self._served is None:
            listed = [m.get("id") for m in self._call("GET", "models", None, tries=1).get("data", [])]
            if self.config.model is not None:
                if listed and self.config.model not in listed:
                    raise SamplerError(
                        f"the server at {self.base_url} serves {', '.join(map(str, listed))}, not "
                        f"{self.config.model!r}; set the sampler's model to one of them"
                    )
                self._served = self.config.model
            elif len(listed) == 1 and isinstance(listed[0], str):
                self._served = listed[0]
            else:
                raise SamplerError(
                    f"the server at {self.base_url} serves {len(listed)} models ({', '.join(map(str, listed))}); "
                    "name one with the sampler's model setting"
                )
        return self._served

    def _probe(self) -> ProbeResult:
        """Score ``PROBE_TEXT`` here and on the server; refuse a mean difference above the tolerance."""
        ids = self.lm.encode_prompt(PROBE_TEXT)
        local = self.lm.token_stats(ids, 1).logprobs
        body = {"model": self.served_model, "prompt": ids, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 0}
        where = f"{self.served_model!r} at {self.base_url}"
        try:
            choice = self._call("POST", "completions", body, tries=1)["choices"][0]
        except SamplerError as error:
            if "HTTP 400" in str(error):
                raise SamplerMismatchError(
                    f"the server {where} refused the probe's token ids of {self.lm.name} ({error}): it serves a "
                    f"model with another tokenizer; start it on {self._local_name()}"
                ) from None
            raise
        entries = choice.get("prompt_logprobs")
        if not entries or len(entries) != len(ids):
            raise SamplerError(
                f"the server {where} returned no prompt_logprobs, so it cannot be checked against {self.lm.name}; "
                "use a server that has them (vLLM) or turn the sampler's check_model off"
            )
        server = np.array([_logprob_of(entry, token) for entry, token in zip(entries[1:], ids[1:], strict=True)])
        difference = np.abs(server - local)
        result = ProbeResult(
            self.served_model,
            len(difference),
            float(difference.mean()),
            float(difference.max()),
            _digest(local),
            _digest(server),
        )
        if not result.mean_difference <= self.config.tolerance:
            raise SamplerMismatchError(
                f"the sampling server's model is not the loaded model: the server serves {where} (probe "
                f"fingerprint {result.server_digest}); loaded is {self._local_name(result.local_digest)}. Their mean "
                f"|Δ log-prob| {result.mean_difference:.3g} nats over {result.tokens} tokens is above the tolerance "
                f"{self.config.tolerance:g}: start the server on the loaded model's weights, or load its model"
            )
        return result

    def _local_name(self, probe_digest: str | None = None) -> str:
        """The loaded model, named by its fingerprint (and its weights' folder, and the probe's, when known)."""
        parts = [f"fingerprint {self.lm.fingerprint[:16]}"]
        if probe_digest:
            parts.append(f"probe fingerprint {probe_digest}")
        if self.lm.extra_info.get("path"):
            parts.append(f"weights in {self.lm.extra_info['path']}")
        return f"{self.lm.name} ({'; '.join(parts)})"

    # ------------------------------------------------------------------ sampling
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
        if len(prompts) != len(seeds):
            raise ValueError(f"got {len(prompts)} prompts but {len(seeds)} seeds; pass one seed per prompt")
        return SampleResult(self._generate(prompts, seeds, config or SamplingConfig(), progress, cost), cost)

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
        for request in requests:
            if not 1 <= request.prefix <= len(ids):
                raise ValueError(f"sampling prefix {request.prefix} is outside 1..{len(ids)}")
        rows = [(i, [*ids[: r.prefix], *r.context], seed) for i, r in enumerate(requests) for seed in r.seeds]
        generations = self._generate([p for _, p, _ in rows], [s for _, _, s in rows], config or SamplingConfig(),
                                     progress, cost)  # fmt: skip
        results: list[list[Generation]] = [[] for _ in requests]
        for (index, _, _), generation in zip(rows, generations, strict=True):
            results[index].append(generation)
        return results

    def _generate(
        self,
        prompts: list[list[int]],
        seeds: list[int],
        config: SamplingConfig,
        progress: ProgressFn | None,
        cost: CallCost,
    ) -> list[Generation]:
        """One request per rollout, ``concurrency`` at a time; ``progress`` after each (it may cancel the rest)."""
        for prompt in prompts:
            if len(prompt) >= self.lm.context_length:
                raise ContextLengthError(len(prompt), self.lm.context_length, "the sampling prompt")
        if not prompts:
            return []
        self.check()
        results: list[Generation | None] = [None] * len(prompts)
        pool = ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(prompts)))
        try:
            futures = {
                pool.submit(self._rollout, prompt, seed, config): i
                for i, (prompt, seed) in enumerate(zip(prompts, seeds, strict=True))
            }
            for done, future in enumerate(as_completed(futures), start=1):
                generation, usage = future.result()
                results[futures[future]] = generation
                cost.tokens_processed += usage.get("prompt_tokens", 0)
                cost.tokens_generated += usage.get("completion_tokens", len(generation.token_ids))
                if progress:
                    progress(done, len(prompts))
        except BaseException:  # a failed rollout or a cancel: drop the queued ones, do not wait for those in flight
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return [g for g in results if g is not None]

    def _rollout(self, prompt: list[int], seed: int, config: SamplingConfig) -> tuple[Generation, dict[str, int]]:
        budget = min(config.max_new_tokens, self.lm.context_length - len(prompt))
        body: dict[str, Any] = {
            "model": self.served_model,
            "prompt": prompt,
            "max_tokens": budget,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "seed": int(seed),
            "return_token_ids": True,
        }
        if config.top_k:
            body["top_k"] = config.top_k
        if config.stop_strings:  # the server stops there too; the local rule below decides where a rollout ends
            body |= {"stop": list(config.stop_strings), "include_stop_str_in_output": True}
        answer = self._call("POST", "completions", body, tries=1 + self.config.retries)
        choice = answer["choices"][0]
        sampled = choice.get("token_ids")
        if sampled is None:  # a server without vLLM's token ids: the text, tokenised here
            sampled = self.lm.encode(choice.get("text", ""))
        reason = "length" if choice.get("finish_reason") == "length" else "eos"
        generation = self.lm.finish_generation(len(prompt), list(sampled), int(seed), config, reason)
        return generation, answer.get("usage") or {}

    # ------------------------------------------------------------------ HTTP
    def _call(self, method: str, path: str, body: dict[str, Any] | None, *, tries: int) -> dict[str, Any]:
        """One JSON request, tried up to ``tries`` times with exponential backoff on transient failures."""
        url = f"{self.base_url}/{path}"
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.config.api_key_env) if self.config.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode() if body is not None else None
        last = ""
        for attempt in range(tries):
            if attempt:
                time.sleep(self.config.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.config.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as error:
                detail = error.read().decode(errors="replace")[:400]
                if error.code not in RETRIED_STATUS:
                    raise SamplerError(
                        f"the server at {url} refused the request (HTTP {error.code}): {detail}"
                    ) from None
                last = f"HTTP {error.code}: {detail}"
            except (TimeoutError, urllib.error.URLError, http.client.HTTPException, OSError) as error:
                reason = getattr(error, "reason", error)
                last = "timed out" if isinstance(reason, TimeoutError) else str(reason)
            except json.JSONDecodeError:
                raise SamplerError(f"the server at {url} answered with something that is not JSON") from None
        raise SamplerError(
            f"the sampling server at {url} did not answer after {tries} tr{'y' if tries == 1 else 'ies'} ({last}); "
            "is it running (scripts/dev engine) at that URL? A slow server may need a longer timeout"
        )


def _base_url(url: str) -> str:
    """The API root: ``/v1`` added to a bare ``http://host:port``."""
    url = url.strip().rstrip("/")
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise SamplerError(f"the sampler URL must look like http://host:port/v1, got {url!r}")
    return url if parsed.path else f"{url}/v1"


def _logprob_of(entry: dict[str, Any] | None, token: int) -> float:
    """The log-prob of ``token`` in one position of vLLM's ``prompt_logprobs`` (keyed by token id)."""
    found = (entry or {}).get(str(token))
    if found is None:
        raise SamplerMismatchError(f"the server's prompt_logprobs lack the prompt's token {token}: another tokenizer")
    return float(found["logprob"] if isinstance(found, dict) else found)


def _digest(logprobs: np.ndarray) -> str:
    """A short name of the probe's scores, equal for models that score it the same to 0.05 nats."""
    return content_key("probe", np.round(logprobs / 0.1).astype(int).tolist())[:12]
