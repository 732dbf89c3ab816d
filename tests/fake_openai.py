"""A tiny OpenAI-compatible completions server for the ``openai`` sampler's tests: it answers on a free
localhost port from a local ``LanguageModel`` (a tiny random one), the way vLLM answers (prompts as token ids,
``return_token_ids``, ``prompt_logprobs`` keyed by token id, the end-of-sequence token among the ids), and can
be told to fail, stall or leave fields out. Every request body and header is recorded."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rredcot_viz.model.sampling import SamplingConfig


class FakeOpenAIServer:
    def __init__(
        self,
        lm: Any,
        *,
        name: str = "tiny",
        failures: int = 0,
        failure_status: int = 503,
        delay: float = 0.0,
        prompt_logprobs: bool = True,
    ):
        self.lm = lm
        self.name = name
        self.failures = failures  # the first ``failures`` completion requests answer ``failure_status``
        self.failure_status = failure_status
        self.delay = delay  # seconds each completion request waits before answering
        self.prompt_logprobs = prompt_logprobs
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def completions(self) -> list[dict[str, Any]]:
        """The sampling requests received (not the probe's)."""
        return [r for r in self.requests if "prompt_logprobs" not in r]

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            if self.failures > 0:
                self.failures -= 1
                return self.failure_status, {"error": {"message": "overloaded, try again"}}
        time.sleep(self.delay)
        prompt = body["prompt"]
        if not isinstance(prompt, list) or not all(isinstance(t, int) for t in prompt):
            return 400, {"error": {"message": "this fake server takes prompts as token ids only"}}
        if max(prompt) >= self.lm.model.config.vocab_size:
            return 400, {"error": {"message": f"token id {max(prompt)} is out of vocabulary"}}
        usage = {"prompt_tokens": len(prompt)}
        if "prompt_logprobs" in body:
            scores = self.lm.token_stats(prompt, 1).logprobs
            entries = [None] + [
                {str(token): {"logprob": float(lp), "rank": 1, "decoded_token": ""}}
                for token, lp in zip(prompt[1:], scores, strict=True)
            ]
            choice = {"text": "", "token_ids": [], "finish_reason": "length"}
            if self.prompt_logprobs:
                choice["prompt_logprobs"] = entries
            return 200, {"choices": [choice], "usage": usage | {"completion_tokens": 1}}
        config = SamplingConfig(
            body.get("temperature", 1.0), body.get("top_p", 1.0), body.get("top_k", 0), body["max_tokens"], (), False, 1
        )
        (generation,) = self.lm.sample([prompt], [body.get("seed", 0)], config).generations
        ids = list(generation.token_ids)
        if generation.finish_reason == "eos":  # vLLM lists the end-of-sequence token among the ids
            ids.append(self.lm.tokenizer.eos_token_id)
        choice = {
            "text": generation.text,
            "token_ids": ids if body.get("return_token_ids") else None,
            "finish_reason": "stop" if generation.finish_reason == "eos" else "length",
        }
        return 200, {"choices": [choice], "usage": usage | {"completion_tokens": len(ids)}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": fake.name, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.headers.append(dict(self.headers))
                if self.path != "/v1/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with fake._lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    self._send(*fake.answer(body))
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

        return Handler
