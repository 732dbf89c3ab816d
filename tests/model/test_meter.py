"""The cost meter: each thread's measured cost is its own; model calls are locked, counted and recorded."""

from __future__ import annotations

import threading

import pytest

from rredcot_viz.model.meter import CostMeter, measure, model_call
from rredcot_viz.types import CallCost


class FakeModel:  # what a metered call needs of a LanguageModel: a lock and a meter
    def __init__(self):
        self.lock = threading.RLock()
        self.meter = CostMeter()

    @model_call("score")
    def call(self, tokens: int, *, cost: CallCost) -> CallCost:
        cost.tokens_processed += tokens
        if tokens < 0:
            raise ValueError("no negative work")
        return cost


def test_each_thread_gets_its_own_cost():
    lm = FakeModel()
    lm.call(5)  # outside any block: only in the running total
    other_done = threading.Event()

    def other_thread():
        with measure() as theirs:
            lm.call(1000)
        assert theirs.cost.tokens_processed == 1000
        other_done.set()

    with measure() as mine:
        lm.call(7)
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        with measure() as inner, measure() as empty:  # nested blocks see the call; equal costs, two blocks
            lm.call(3)
        assert empty.cost == inner.cost
    assert other_done.is_set()
    assert (mine.cost.calls, mine.cost.tokens_processed) == (2, 10)  # not the other thread's 1000
    assert (inner.cost.calls, inner.cost.tokens_processed) == (1, 3)
    assert lm.meter.total.tokens_processed == 1015


def test_a_metered_call_is_named_timed_and_recorded_even_when_it_fails():
    lm = FakeModel()
    cost = lm.call(4, operation="engine")
    assert lm.meter.history[-1] == ("engine", cost) and cost.calls == 1 and cost.seconds >= 0
    with pytest.raises(ValueError, match="no negative work"):
        lm.call(-1)
    assert lm.meter.history[-1][0] == "score" and lm.meter.total.calls == 2


def test_meter_accumulates_costs(tiny):
    before = tiny.meter.total.calls
    tiny.token_stats(tiny.encode("one two three"), start=1)
    tiny.token_stats(tiny.encode("four five"), start=1)
    assert tiny.meter.total.calls == before + 2
    assert tiny.meter.history[-1][0] == "token_stats"


def test_heartbeats_show_the_running_call_and_a_listener_can_stop_it():
    from rredcot_viz.model.meter import heartbeat, listen

    class Stop(Exception):
        pass

    lm = FakeModel()
    seen = []

    @model_call("sample")
    def steps(self, n: int, *, cost: CallCost) -> None:
        for step in range(n):
            cost.tokens_generated += 2
            heartbeat(cost, step + 1, n)

    with measure() as spent:

        def listener():
            seen.append((spent.so_far.tokens_generated, spent.rows))
            if len(seen) == 3:
                raise Stop

        with listen(listener), pytest.raises(Stop):
            steps(lm, 10)
    assert seen == [(2, (1, 10)), (4, (2, 10)), (6, (3, 10))]
    assert spent.running is None and spent.cost.tokens_generated == 6  # the stopped call is recorded once
    heartbeat(CallCost(tokens_generated=1), 1, 1)  # nobody listens now: nothing happens
    assert lm.meter.total.tokens_generated == 6
