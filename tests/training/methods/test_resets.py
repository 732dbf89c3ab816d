"""Reset methods (training/methods/resets.py, rrpo.py, srpo.py): the reset prefix is the parent's tokens before
the chosen step, SRPO's localiser reads the last box of a reply sampled without stop strings, and the step's
reset metrics count what happened."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from types import SimpleNamespace

import numpy as np
import pytest

from rredcot_viz.diagnosis.self_localize import parse_localisation_detailed
from rredcot_viz.scoring.plan import ResponseTokens
from rredcot_viz.segmenters import segmenters
from rredcot_viz.training import config_for
from rredcot_viz.training.methods import methods
from rredcot_viz.training.methods.base import SampleRequest
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import builtin_problems

PARENT = (  # six lines, so six steps: no merging at reset_steps=6
    "Sam starts with 3 apples.\nHe buys 4 more, so 3 + 4 = 7.\nThen he gives away 2, so 7 - 2 = 5.\n"
    "He finds 1 more, so 5 + 1 = 6.\nThe total is 6 apples.\nThe answer is 9.\n"
)


@dataclass
class ScriptedSource:
    """A ``RolloutSource``: the first fresh chain fails (the parent), the others succeed; reset requests are
    recorded. ``reply`` replaces the policy's localisation reply (with the sampling settings recorded)."""

    lm: object
    seed: int = 0
    reply: str | None = None
    requests: list[SampleRequest] = field(default_factory=list)
    sampling: list[object] = field(default_factory=list)

    @property
    def policy(self):
        if self.reply is None:
            return self.lm
        return ScriptedPolicy(self)

    def sample(self, requests):
        self.requests += requests
        out = []
        for request in requests:
            rows = []
            for i in range(request.n):
                fresh = not request.prefix and request.key[1] == "fresh"
                text = PARENT if fresh and i == 0 else "The answer is 7.\n"
                ids = list(request.prefix) + self.lm.encode(text)
                rows.append(TrainRollout([1], ids, text, 0.0 if fresh and i == 0 else 1.0, i, len(request.prefix)))
            out.append(rows)
        return out

    def rng(self, *key):
        return np.random.default_rng([self.seed, len(repr(key))])


class ScriptedPolicy:
    """The tiny model, except that ``sample`` answers with the source's reply and records its settings."""

    def __init__(self, source: ScriptedSource):
        self.source = source

    def __getattr__(self, name):
        return getattr(self.source.lm, name)

    def sample(self, prompts, seeds, sampling):
        self.source.sampling.append(sampling)
        return SimpleNamespace(generations=[SimpleNamespace(text=self.source.reply)])


def expected_prefix(lm, ids: list[int], step: int) -> list[int]:
    """The parent's tokens that decode to its first ``step - 1`` lines, found from the text alone."""
    chars = sum(len(line) + 1 for line in PARENT.split("\n")[: step - 1])
    (cut,) = [n for n in range(len(ids) + 1) if lm.decode(ids[:n]) == PARENT[:chars]]
    return ids[:cut]


@pytest.mark.parametrize("method", ["rrpo", "srpo"])
def test_the_reset_prefix_is_the_parent_before_the_chosen_step(tiny, method):
    assert tiny.decode(tiny.encode(PARENT)) == PARENT
    problem = builtin_problems(1)[0]
    config = config_for(method, k=6)
    chosen = set()
    for seed in range(12):
        source = ScriptedSource(tiny, seed)
        groups = methods.get(method)(config)._collect_one(source, problem, 0)
        assert [g.name for g in groups] == ["base", "reset"]
        parent = groups[1].parent
        assert parent.text == PARENT and len(parent.info["reset_step_chars"]) == 6
        step = parent.info["reset_step"]
        (request,) = [r for r in source.requests if r.key[1] == "reset"]
        assert list(request.prefix) == expected_prefix(tiny, parent.completion_ids, step)
        assert all(r.suffix_start == len(request.prefix) for r in groups[1].rollouts)
        chosen.add(step)
    assert len(chosen) >= 3 and max(chosen) > 2  # several steps, most with a non-empty prefix


def test_srpo_reads_the_last_box_of_a_reply_sampled_without_stop_strings(tiny):
    problem = builtin_problems(1)[0]
    reply = "Step 2 looks fine. The answer is \\boxed{7}.\nThe first wrong step is \\boxed{4}.\nStep 1 is right."
    source = ScriptedSource(tiny, reply=reply)
    groups = methods.get("srpo")(config_for("srpo", k=6))._collect_one(source, problem, 0)
    (sampling,) = source.sampling
    assert sampling.stop_strings == () and not sampling.stop_on_answer and sampling.max_new_tokens == 256
    parent = groups[1].parent
    assert parent.info["reset_step"] == 4 and parent.info["localiser_rule"] == "boxed"
    (request,) = [r for r in source.requests if r.key[1] == "reset"]
    assert list(request.prefix) == expected_prefix(tiny, parent.completion_ids, 4)
    metrics = methods.get("srpo")(config_for("srpo")).step_metrics(groups)
    assert metrics["localiser_parse_rate"] == 1.0 and metrics["localiser_fallback_share"] == 0.0
    assert metrics["reset_empty_prefix_share"] == 0.0
    assert metrics["reset_prefix_fraction"] == pytest.approx(len(request.prefix) / len(parent.completion_ids))


def test_an_unparsed_localisation_falls_back_as_configured(tiny):
    problem = builtin_problems(1)[0]
    first = methods.get("srpo")(config_for("srpo", reset_steps=6, localizer_fallback="first"))
    groups = first._collect_one(ScriptedSource(tiny, reply="I cannot tell."), problem, 0)
    assert groups[1].parent.info["reset_step"] == 1 and groups[1].parent.info["localiser_rule"] == "default"
    metrics = first.step_metrics(groups)
    assert metrics["localiser_parse_rate"] == 0.0 and metrics["localiser_fallback_share"] == 1.0
    assert metrics["reset_empty_prefix_share"] == 1.0 and metrics["reset_prefix_fraction"] == 0.0
    uniform = methods.get("srpo")(config_for("srpo", reset_steps=6))
    steps = {
        uniform._collect_one(ScriptedSource(tiny, seed, reply="I cannot tell."), problem, 0)[1].parent.info[
            "reset_step"
        ]
        for seed in range(12)
    }
    assert len(steps) >= 3 and steps <= set(range(1, 7))


@pytest.mark.parametrize(
    ("reply", "step", "rule"),
    [
        ("\\boxed{2} then \\boxed{3}", 3, "boxed"),  # the last box, not the first
        ("The answer is \\boxed{12}. Step 2 is wrong.", 2, "step"),  # a box out of range falls through
        ("nothing here", 1, "default"),
        ("   ", 2, "empty_reply"),
    ],
)
def test_localisation_rules(reply, step, rule):
    assert parse_localisation_detailed(reply, 4, allow_none=False) == (step, rule)


def test_a_short_parent_is_cut_into_equal_pieces(tiny):
    """A two-line parent has fewer line pieces than ``reset_steps``: it is cut into that many pieces."""
    from rredcot_viz.training.methods.resets import parent_steps

    text = "Sam has 3 apples and buys 4 more, so 3 + 4 = 7 apples in total.\nThe answer is 7.\n"
    parent = TrainRollout([1], tiny.encode(text), text, 0.0, 0)
    steps = parent_steps(tiny, parent, config_for("rrpo"))
    assert len(steps) == 5 and parent.info["reset_segmenter"] == "word_starts"
    assert steps[0][0] == 0 and steps[-1][1] == len(parent.completion_ids)
    assert all(a < b for a, b in steps) and all(b == c for (_, b), (c, _) in pairwise(steps))


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("The answer is 15.\n", ["The", " answer", " is", " 15.\n"]),  # four words: one step each
        ("So the answer is 15.\n", ["So", " the", " answer", " is", " 15.\n"]),  # five words, five steps
    ],
)
def test_an_answer_only_parent_gets_a_step_per_word_up_to_reset_steps(tiny, text, pieces):
    """``fixed_tokens`` gave these fewer steps (L = ceil(T / 5) rounds up, and cuts snapped to the same word
    start), so more resets from the empty prefix; each word start is now a step, and the step metrics count
    the chance 1/H that a uniform reset starts empty."""
    from rredcot_viz.training.methods.resets import parent_steps

    parent = TrainRollout([1], tiny.encode(text), text, 0.0, 0)
    steps = parent_steps(tiny, parent, config_for("rrpo"))
    assert [text[a:b] for a, b in parent.info["reset_step_chars"]] == pieces and len(steps) == len(pieces)
    fixed = segmenters.get("fixed_tokens")(k=5).segment(
        ResponseTokens.from_ids(tiny, parent.completion_ids).segmenter_input("whole", None)
    )
    assert fixed.k < len(pieces)  # the control: the former cut
    parent.info.update(reset_steps=len(steps), prefix_tokens=0)
    metrics = methods.get("rrpo")(config_for("rrpo")).step_metrics([Group("reset", [], 0, parent=parent)])
    assert metrics["reset_uniform_empty_chance"] == pytest.approx(1 / len(pieces))
    assert metrics["reset_steps_mean"] == len(pieces) and metrics["reset_empty_prefix_share"] == 1.0


def test_reset_metrics_without_a_reset_group():
    rollout = TrainRollout([1], [2, 3], "x", 1.0, 0)
    assert methods.get("rrpo")(config_for("rrpo")).step_metrics([Group("fallback", [rollout], 0)]) == {
        "reset_groups": 0
    }


def test_reset_methods_default_to_the_sequence_mean_loss():
    from rredcot_viz.training.presets import paper, quick

    for preset in (config_for, quick, paper):
        assert preset("srpo").loss == preset("rrpo").loss == "reinforce"
        assert preset("grpo").loss == preset("rredcot").loss == "ppo_clip"
    assert paper("srpo").localizer_fallback == "first" and quick("srpo").localizer_fallback == "random"
