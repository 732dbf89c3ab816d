"""The "how to add a ..." recipes of docs/ARCHITECTURE.md, each exercised: a toy estimator, segmenter, detector
and training method, each written as its own file would be (a config with ``setting`` fields, a class, one
``register`` line), then used through the same calls the app and the CLI make, with nothing else edited."""

from __future__ import annotations

import argparse
import ast
import re
from dataclasses import dataclass, replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from rredcot_viz.app import screen_path
from rredcot_viz.cli.model_commands import add_sampler_arguments, sampler_spec_from_args
from rredcot_viz.cli.options import add_settings_arguments, settings_from_args
from rredcot_viz.diagnosis.base import NO_ERROR, Detector, DetectorConfig, FirstError, detectors
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.base import (
    EstimatorConfig,
    ValueEstimator,
    auto_estimators,
    credit_estimators,
    estimators,
    live_estimators,
    sampling_estimators,
)
from rredcot_viz.model.backends.base import Sampler
from rredcot_viz.model.backends.spec import SamplerConfig, samplers
from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.segmenters.base import (
    Segmenter,
    SegmenterConfig,
    SegmenterInput,
    k_setting,
    segmenter_takes_count,
    segmenters,
)
from rredcot_viz.settings import setting
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training import Trainer, builtin_split, config_for
from rredcot_viz.training.config import TrainConfig, method_setting
from rredcot_viz.training.credit import credit_segmenter
from rredcot_viz.training.methods.base import TrainingMethod, broadcast_group_advantages, methods
from rredcot_viz.types import CallCost, Generation, SampleResult, StateValues
from rredcot_viz.ui import resources

TRACE = Trace(
    "What is 2 + 3?",
    "First, 2 + 3 = 5.\nSo the sum is 5.\nThe answer is \\boxed{5}.",
    reference_answer="5",
    correct=True,
)


def page_app(page: str, monkeypatch, tmp_path) -> AppTest:
    """The app opened on ``page`` (a store of this test's own), as a user lands on it."""
    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "store.duckdb"))
    app = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=180).run()
    app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


@pytest.fixture
def registered():
    """Register toy implementations for one test and remove them after it (``Registry.unregister``)."""
    added = []

    def register(registry, name, implementation):
        registry.register(name)(implementation)
        added.append((registry, name))
        return implementation

    yield register
    for registry, name in added:
        registry.unregister(name)


# --- recipe: a value estimator (estimators/<name>.py) --------------------------------------------------
@dataclass(frozen=True)
class RampConfig(EstimatorConfig):
    top: float = setting(0.5, "value of the last state before the outcome", low=0.0, high=1.0)


class RampEstimator(ValueEstimator):
    """Values rising linearly to ``top``, then the outcome: no model call at all."""

    name = "toy_ramp"
    Config = RampConfig
    needs = ("outcome",)
    credit = True  # values from (no) scores alone: the trainer may credit rollouts with it

    def state_values(self, context, segmentation, progress=None) -> StateValues:
        return self.combine([], {}, segmentation.k + 1, context.trace.outcome)

    def combine(self, series, scores, n_states, outcome) -> StateValues:
        return StateValues(self.name, np.append(np.linspace(0.0, self.config.top, n_states - 1), outcome))


def test_a_new_estimator_is_one_class_and_one_register_line(tiny, registered):
    registered(estimators, "toy_ramp", RampEstimator)
    assert "toy_ramp" in estimators.names()
    result = Analyzer(tiny, AnalysisConfig(boundaries="states")).analyze(
        TRACE, segmenters.get("line")(), estimators.get("toy_ramp")(top=0.4)
    )
    k = result.k
    np.testing.assert_allclose(result.values.values, [*np.linspace(0.0, 0.4, k), 1.0])
    assert result.sigma.sum() == pytest.approx(1.0) and result.cost.calls == 1  # the token stats only
    parser = argparse.ArgumentParser()
    add_settings_arguments(parser, [estimators.get(n).Config for n in estimators.names()], prefix="est")
    args = parser.parse_args(["--est-top", "0.3"])  # in the CLI with no CLI edit
    assert settings_from_args(args, RampConfig, prefix="est") == {"top": 0.3}


def test_a_new_estimator_is_selected_by_what_it_declares(registered):
    registered(estimators, "toy_ramp", RampEstimator)
    assert "toy_ramp" in live_estimators() and "toy_ramp" in credit_estimators()
    assert "toy_ramp" not in sampling_estimators() and "toy_ramp" not in auto_estimators()
    assert config_for("rredcot", estimator="toy_ramp").credit.estimator == "toy_ramp"  # the trainer's credit accepts it
    with pytest.raises(ConfigError, match="estimator must be one of"):
        config_for("rredcot", estimator="uniform")  # declares no credit: it has no ``combine``


def test_the_trainer_credits_rollouts_with_a_new_credit_estimator(tiny, registered):
    registered(estimators, "toy_ramp", RampEstimator)
    config = config_for(
        "rredcot", estimator="toy_ramp", estimator_options={"top": 0.4}, steps=1, group_size=2, max_new_tokens=6,
        eval_every=0, lora_rank=2,
    )  # fmt: skip
    train, held_out = builtin_split(8, 2, seed=0)
    _, groups = Trainer(tiny, config, train, held_out).train_step()
    credited = [r for g in groups for r in g.rollouts if "values" in r.info]
    assert credited
    for rollout in credited:  # the toy's own ``combine``: a ramp to 0.4, then the reward
        values = rollout.info["values"]
        np.testing.assert_allclose(values, [*np.linspace(0.0, 0.4, len(values) - 1), rollout.reward])


@pytest.mark.integration
def test_a_new_estimator_shows_in_the_inspect_and_compare_pickers(registered, monkeypatch, tmp_path):
    registered(estimators, "toy_ramp", RampEstimator)
    inspect = page_app(screen_path("inspect"), monkeypatch, tmp_path)
    inspect.radio(key="inspect_source").set_value("live").run()
    assert "toy_ramp" in inspect.selectbox(key="inspect_estimator").options
    jobs = resources.jobs()
    for job in [job for job in jobs.jobs(limit=20) if job.active]:  # the live analysis the page started
        assert jobs.wait(job, timeout=600).status == "done", job.error
    compare = page_app(screen_path("compare"), monkeypatch, tmp_path)
    assert "toy_ramp" in compare.multiselect(key="compare_methods").options


# --- recipe: a segmenter (segmenters/<name>.py) ----------------------------------------------------------
@dataclass(frozen=True)
class CommaConfig(SegmenterConfig):
    mark: str = setting(",", "the character to cut after")


@dataclass(frozen=True)
class WordsConfig(SegmenterConfig):
    k: int | None = k_setting(4, "the first K - 1 word starts are cut")


class CommaSegmenter(Segmenter):
    """Cut after every occurrence of ``mark``."""

    name = "toy_comma"
    Config = CommaConfig

    def propose(self, inp: SegmenterInput):
        cuts = [inp.char_to_token_cut(i + 1) for i, c in enumerate(inp.text) if c == self.config.mark]
        return cuts, ["mark"] * len(cuts), {}


class EveryWordSegmenter(Segmenter):
    """Cut before every word, then keep the first K - 1 cuts: a segmenter that declares it takes K."""

    name = "toy_words"
    Config = WordsConfig
    targets_count = True

    def propose(self, inp: SegmenterInput):
        cuts = [inp.char_to_token_cut(m.start()) for m in re.finditer(r"(?<=\s)\S", inp.text)]
        if self.config.k is not None:
            cuts = cuts[: self.config.k - 1]
        return cuts, ["word"] * len(cuts), {}


def test_a_new_segmenter_is_one_class_and_one_register_line(tiny, registered):
    registered(segmenters, "toy_comma", CommaSegmenter)
    trace = Trace("q", "one, two, three", reference_answer="3", correct=True)
    segmentation = Analyzer(tiny, AnalysisConfig(scope="whole")).segment(trace, segmenters.get("toy_comma")())
    assert [s.text for s in segmentation.segments] == ["one,", " two,", " three"]
    assert "".join(s.text for s in segmentation.segments) == trace.cot


def test_the_trainer_hands_k_to_a_new_segmenter_that_declares_it(registered):
    registered(segmenters, "toy_comma", CommaSegmenter)
    registered(segmenters, "toy_words", EveryWordSegmenter)
    assert segmenter_takes_count("toy_words") and not segmenter_takes_count("toy_comma")
    config = config_for("rredcot", segmenter="toy_words", segments=3)  # offered by the trainer's config
    assert credit_segmenter(config.credit, "one two three four").config.k == 3
    assert credit_segmenter(replace(config.credit, segmenter="toy_comma"), "one, two").config.k is None


# --- recipe: a first-error detector (diagnosis/<name>.py) -------------------------------------------------
@dataclass(frozen=True)
class LongestConfig(DetectorConfig):
    flag_correct: bool = setting(False, "also blame a segment of a correct trace")


class LongestSegment(Detector):
    """Blames the longest segment of a failed trace."""

    name = "toy_longest"
    Config = LongestConfig
    needs = ("outcome",)

    def locate(self, analyzer, trace, segmenter, progress=None) -> FirstError:
        segmentation = self.segmentation(analyzer, trace, segmenter)
        lengths = np.array([len(s.text) for s in segmentation.segments], dtype=float)
        blamed = int(lengths.argmax()) if (trace.outcome == 0 or self.config.flag_correct) else NO_ERROR
        return FirstError(self.name, blamed, lengths)


def test_a_new_detector_is_one_class_and_one_register_line(tiny, registered):
    registered(detectors, "toy_longest", LongestSegment)
    failed = Trace("q", "a.\nthe longest line here.\nb.", reference_answer="1", correct=False)
    verdict = detectors.get("toy_longest")().detect(Analyzer(tiny), failed, segmenters.get("line")())
    assert verdict.prediction == 1 and verdict.cost.calls == 1  # the token stats for the segmentation


# --- recipe: a training method (training/methods/<name>.py) -----------------------------------------------
@dataclass(frozen=True)
class SignConfig(TrainConfig):
    method: str = method_setting("toy_sign")
    scale: float = setting(2.0, "advantage of a rewarded rollout (minus it for the others)", low=0.0)


class SignMethod(TrainingMethod):
    """+scale for a rewarded rollout, -scale otherwise: a config subclass and one ``advantages`` override."""

    name = "toy_sign"
    Config = SignConfig

    def advantages(self, groups, scorer) -> None:
        broadcast_group_advantages(groups)  # fills the per-token arrays with the right lengths
        for rollout in (r for g in groups for r in g.rollouts):
            rollout.token_advantages[:] = self.config.scale * (1.0 if rollout.reward else -1.0)


def test_a_new_training_method_is_a_config_and_one_override(tiny, registered):
    registered(methods, "toy_sign", SignMethod)
    config = config_for("toy_sign", steps=1, group_size=2, max_new_tokens=4, eval_every=0, lora_rank=2, scale=3.0)
    train, held_out = builtin_split(8, 2, seed=0)
    metrics, groups = Trainer(tiny, config, train, held_out).train_step()
    advantages = {float(a) for g in groups for r in g.rollouts for a in r.token_advantages}
    assert advantages <= {3.0, -3.0} and metrics["step"] == 1 and metrics["tokens_trained"] > 0


# --- recipe: a sampling backend (model/backends/<name>.py) ------------------------------------------------
@dataclass(frozen=True)
class EchoConfig(SamplerConfig):
    answer: str = setting("\\boxed{5}", "what every rollout says")


class EchoSampler(Sampler):
    """Every rollout is ``answer`` (an engine that always agrees)."""

    name = "toy_echo"
    Config = EchoConfig

    def sample(self, prompts, seeds, config=None, *, progress=None) -> SampleResult:
        ids, text = self.lm.encode(self.config.answer), self.config.answer
        rows = [Generation(len(p), ids, text, "eos", s) for p, s in zip(prompts, seeds, strict=True)]
        return SampleResult(rows, CallCost(calls=1))

    def sample_after_prefixes(self, ids, requests, config=None, *, progress=None):
        return [self.sample([ids[: r.prefix]] * len(r.seeds), list(r.seeds)).generations for r in requests]


def test_a_new_sampling_backend_is_one_class_and_one_register_line(tiny, registered):
    registered(samplers, "toy_echo", EchoSampler)
    parser = argparse.ArgumentParser()
    add_sampler_arguments(parser)  # in the CLI with no CLI edit
    spec = sampler_spec_from_args(parser.parse_args(["--sampler", "toy_echo", "--sampler-answer", "\\boxed{4}"]))
    analyzer = Analyzer(tiny, AnalysisConfig(boundaries="states"), sampler=spec.build(tiny))
    result = analyzer.analyze(TRACE, segmenters.get("line")(), estimators.get("mc")(rollouts=2))
    assert result.values.values.tolist() == [0.0] * result.k + [1.0]  # every rollout answers 4, not 5
    assert estimators.get("mc")().sampling_key(analyzer.context(TRACE)) != estimators.get("mc")().sampling_key(
        Analyzer(tiny).context(TRACE)
    )  # its rollouts are stored apart from the local sampler's


# --- no face or use case keeps its own list of registered names ---------------------------------------------
def _registries():
    from rredcot_viz.attribution import attributions
    from rredcot_viz.diagnosis import detectors as all_detectors
    from rredcot_viz.training.methods.base import methods as all_methods

    return {
        "rredcot_viz/estimators": estimators,
        "rredcot_viz/segmenters": segmenters,
        "rredcot_viz/diagnosis": all_detectors,
        "rredcot_viz/attribution": attributions,
        "rredcot_viz/training/methods": all_methods,
    }


def name_lists(source: str, names: set[str]) -> list[int]:
    """Lines of ``source`` with a literal tuple, list or set holding two or more of ``names``, except where it
    is assigned to a ``default`` (a page's default choice is a choice, not a list of what exists)."""
    tree = ast.parse(source)
    allowed = set()
    for node in ast.walk(tree):
        defaults: list[ast.AST] = []
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any("default" in ast.unparse(target).lower() for target in targets):
                defaults.append(node.value)
        if isinstance(node, ast.arguments):
            defaults += [default for default in [*node.defaults, *node.kw_defaults] if default is not None]
        allowed |= {id(child) for default in defaults for child in ast.walk(default)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and id(node) not in allowed:
            listed = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(listed & names) >= 2:
                lines.append(node.lineno)
    return lines


def test_name_lists_are_caught():
    names = {"rredcot", "mc", "uniform"}
    assert name_lists('LIVE = ("rredcot", "uniform")\nx = n in ["mc", "rredcot"]', names) == [1, 2]
    assert name_lists('DEFAULT = ("rredcot", "mc")\ndef f(d=("mc", "uniform")): ...\ny = ("mc", "x")', names) == []


def test_no_module_outside_a_registry_lists_registered_names():
    """Pickers, the trainer, the analyzer and the detectors select by declared capabilities (``having``), so a
    newly registered method reaches them all; a hand-kept list of names would leave it out."""
    sources = list((PROJECT_ROOT / "rredcot_viz").rglob("*.py"))  # the pages too: rredcot_viz/app/screens/
    found = []
    for package, registry in _registries().items():
        for path in sources:
            relative = path.relative_to(PROJECT_ROOT).as_posix()
            if relative.startswith(package + "/"):
                continue  # the registry's own package: each file registers and describes its own names
            for line in name_lists(path.read_text(encoding="utf-8"), set(registry.names())):
                found.append(f"{relative}:{line} lists {registry.kind} names")
    assert not found, found
