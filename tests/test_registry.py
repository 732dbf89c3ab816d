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


def test_the_built_in_methods_declare_what_the_faces_used_to_list():
    assert estimators.having(live=True) == ["rredcot", "answer_only", "own_answer", "continue_only", "uniform"]
    assert estimators.having(credit=True) == ["rredcot", "answer_only", "continue_only"]
    assert estimators.having(samples=True) == ["mc"] and estimators.having(steps_only=True) == ["published_mc"]
    assert segmenters.having(targets_count=True) == ["hybrid", "fixed_tokens", "word_starts", "adaptive_entropy"]
    assert segmenters.having(scored_up_front=True) == ["keyword", "line", "paragraph", "sentence", "given"]
    assert segmenters.having(follows_steps=True) == ["given"]


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
