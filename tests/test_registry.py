"""``Registry``: names, aliases, and selecting implementations by what they declare (``having``)."""

from __future__ import annotations

import pytest

from rredcot_viz.errors import UnknownNameError
from rredcot_viz.estimators import estimators
from rredcot_viz.registry import Registry
from rredcot_viz.segmenters import segmenters


class Slow:
    live, credit = False, True


class Fast:
    live, credit = True, False


def test_having_selects_by_declared_capabilities_in_registration_order():
    things = Registry[type]("thing")
    things.register("slow", aliases=("tortoise",))(Slow)
    things.register("fast")(Fast)
    assert things.having(live=True) == ["fast"] and things.having(credit=True) == ["slow"]
    assert things.having(live=False, credit=True) == ["slow"] and things.having(live=True, credit=True) == []
    assert things.having() == ["slow", "fast"] and things.get("tortoise") is Slow
    with pytest.raises(AttributeError):
        things.having(samples=True)  # a capability nobody declares is a typo, not an empty answer
    things.unregister("tortoise")
    assert things.names() == ["fast"] and "tortoise" not in things
    with pytest.raises(UnknownNameError):
        things.get("slow")


ESTIMATORS = {  # what each built-in declares (a new estimator adds itself, never edits this table)
    "rredcot": {"live": True, "credit": True},
    "answer_only": {"live": True, "credit": True},
    "own_answer": {"live": True, "credit": False},
    "continue_only": {"live": True, "credit": True},
    "uniform": {"live": True, "credit": False},
    "mc": {"live": False, "samples": True},
    "published_mc": {"live": False, "steps_only": True},
}
SEGMENTERS = {
    "hybrid": {"targets_count": True},
    "fixed_tokens": {"targets_count": True},
    "word_starts": {"targets_count": True},
    "adaptive_entropy": {"targets_count": True},
    "keyword": {"scored_up_front": True},
    "line": {"scored_up_front": True},
    "paragraph": {"scored_up_front": True},
    "sentence": {"scored_up_front": True},
    "given": {"scored_up_front": True, "follows_steps": True},
}


def test_the_built_in_methods_declare_what_the_faces_used_to_list():
    """Each built-in's declarations, one by one: a new implementation (one file, one registry line) adds a name to
    ``having()`` and changes no assertion here (exact ``having()`` lists failed the suite on any addition)."""
    for table, registry in ((ESTIMATORS, estimators), (SEGMENTERS, segmenters)):
        for name, declared in table.items():
            for capability, value in declared.items():
                assert bool(getattr(registry.get(name), capability)) is value, (name, capability)
    assert set(ESTIMATORS) <= set(estimators.names()) and set(SEGMENTERS) <= set(segmenters.names())


def test_a_toy_estimator_and_segmenter_registered_at_run_time_reach_every_face():
    """The recipe: one class, one registry line; the CLI's choices, the pickers' lists and the trainer's credit
    choices find it with no other file changed."""
    from rredcot_viz.cli import build_parser
    from rredcot_viz.estimators import credit_estimators, live_estimators
    from rredcot_viz.estimators.rredcot import AnswerOnlyEstimator
    from rredcot_viz.segmenters.lines import LineSegmenter
    from rredcot_viz.training.config import CreditConfig

    estimators.register("toy_value")(type("ToyValue", (AnswerOnlyEstimator,), {"name": "toy_value"}))
    segmenters.register("toy_cut")(type("ToyCut", (LineSegmenter,), {"name": "toy_cut"}))
    try:
        assert "toy_value" in live_estimators() and "toy_value" in credit_estimators()
        assert CreditConfig(estimator="toy_value").estimator == "toy_value"  # the trainer takes it
        args = build_parser("analyze").parse_args(
            ["analyze", "x.jsonl", "--estimator", "toy_value", "--segmenter", "toy_cut"]
        )  # fmt: skip  (argparse checks its choices)
        assert (args.estimator, args.segmenter) == ("toy_value", "toy_cut")
    finally:
        estimators.unregister("toy_value")
        segmenters.unregister("toy_cut")


def test_a_segmenter_targets_a_count_exactly_when_its_k_is_a_setting():
    """``targets_count`` and the config's ``k_setting`` say the same thing (the forms show K, the trainer hands it)."""
    from rredcot_viz.settings import specs

    for name in segmenters.names():
        segmenter = segmenters.get(name)
        k_is_a_setting = any(spec.name == "k" for spec in specs(segmenter.Config))
        assert segmenter.targets_count == k_is_a_setting, name


def test_a_credit_estimator_implements_combine_and_the_others_refuse_it():
    from rredcot_viz.estimators import ValueEstimator

    for name in estimators.having(credit=True):
        assert estimators.get(name).combine is not ValueEstimator.combine, name
    with pytest.raises(NotImplementedError, match="'uniform' cannot credit rollouts"):
        estimators.get("uniform")().combine([], {}, 2, 1.0)
