"""What model calls cost, metered once per call site.

- ``@model_call("sample")`` wraps every public model call: it runs under the model's lock (the app serves
  several sessions and background jobs from one model, and a KV cache must not interleave with another call),
  hands the call a fresh ``CallCost`` to count passes and tokens into, times it and records it;
- ``measure(lm)`` is how anything above the model learns what a computation cost: the calls *this thread*
  made inside the block, never another session's or job's calls made at the same time;
- ``heartbeat`` is how a long call (each step of the sampling loop) shows what it has done so far: the open
  blocks see the running call's cost and rows, and the thread's ``listen`` callbacks run, which may raise to
  stop the call (a job's cancellation lands within one decode step).

    >>> with measure() as spent:
    ...     pass
    >>> spent.cost.calls
    0
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rredcot_viz.types import CallCost

_open_scopes = threading.local()


@dataclass(eq=False)  # blocks are told apart by identity: two with equal costs are still two blocks
class CostScope:
    """The cost of the model calls one thread made inside a ``measure`` block, and of the call running now
    (``running``, with its finished and asked rows) as its last heartbeat reported it."""

    cost: CallCost = field(default_factory=CallCost)
    running: CallCost | None = None
    rows: tuple[int, int] = (0, 0)

    @property
    def so_far(self) -> CallCost:
        """Finished calls plus the running one up to its last heartbeat."""
        running = self.running
        return self.cost if running is None else self.cost + running


@dataclass
class CostMeter:
    """Running totals over the life of a model, the last ``keep`` calls by operation name, and each call
    credited to the calling thread's open ``measure`` blocks."""

    total: CallCost = field(default_factory=CallCost)
    history: list[tuple[str, CallCost]] = field(default_factory=list)
    keep: int = 200

    def record(self, operation: str, cost: CallCost) -> None:
        self.total = self.total + cost
        self.history.append((operation, cost))
        del self.history[: -self.keep]
        for scope in getattr(_open_scopes, "stack", ()):
            scope.cost = scope.cost + cost
            scope.running = None


@contextmanager
def measure() -> Iterator[CostScope]:
    """Collect the cost of the model calls this thread makes inside the block (of every model)."""
    scope = CostScope()
    stack = getattr(_open_scopes, "stack", None)
    if stack is None:
        stack = _open_scopes.stack = []
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.remove(scope)


@contextmanager
def listen(listener: Callable[[], None]) -> Iterator[None]:
    """Call ``listener()`` on every heartbeat of the model calls this thread makes inside the block; it may
    raise to stop the running call (what that call drew is lost, earlier calls' results are kept)."""
    listeners = getattr(_open_scopes, "listeners", None)
    if listeners is None:
        listeners = _open_scopes.listeners = []
    listeners.append(listener)
    try:
        yield
    finally:
        listeners.remove(listener)


def heartbeat(cost: CallCost, rows_done: int = 0, rows_total: int = 0) -> None:
    """Report a running call's progress from inside its loop: ``cost`` so far, and how many of the rows it was
    asked for (rollouts, answers) have finished. Cheap when nobody listens."""
    for scope in getattr(_open_scopes, "stack", ()):
        scope.running, scope.rows = cost, (rows_done, rows_total)
    for listener in tuple(getattr(_open_scopes, "listeners", ())):
        listener()


def model_call(operation: str) -> Callable[[Callable], Callable]:
    """Decorate a model method taking a ``cost`` keyword: lock, count, time and record it as ``operation``
    (a call may name itself otherwise with ``operation=``)."""

    def decorate(method: Callable) -> Callable:
        @functools.wraps(method)
        def call(self: Any, *args: Any, operation: str = operation, **kwargs: Any) -> Any:
            with self.lock:
                cost = CallCost(calls=1)
                started = time.perf_counter()
                try:
                    return method(self, *args, cost=cost, **kwargs)
                finally:
                    cost.seconds = time.perf_counter() - started
                    self.meter.record(operation, cost)

        return call

    return decorate
