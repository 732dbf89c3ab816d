"""The value probe (estimators/probe.py, estimators/value_probe.py): fitting recovers a planted signal, the probe
is keyed by model and precision, its values go through the shared redistribution, a missing probe says how to
fit one."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import tiny_lm

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.errors import MissingProbeError
from rredcot_viz.estimators import estimators, redistribute
from rredcot_viz.estimators.value_probe import (
    ValueProbe,
    find_probe,
    fit_probe,
    group_folds,
    precision_of,
    probe_path,
    select,
)
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

TRACE = Trace(
    "What is 2 + 3?", "First, 2 + 3 = 5.\nSo the sum is 5.\nThe answer is \\boxed{5}.", reference_answer="5",
    correct=True,
)  # fmt: skip


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RREDCOT_DATA_DIR", str(tmp_path))
    return tmp_path


def planted(n: int = 300, d: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (3 layers, n, d) where only layer 2 carries y = sigmoid(2 x_0 - x_1), as success rates of 16."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(3, n, d))
    p = 1 / (1 + np.exp(-(2 * features[2, :, 0] - features[2, :, 1])))
    return features, rng.binomial(16, p) / 16, p


def test_a_fitted_probe_recovers_a_planted_linear_signal():
    features, y, p = planted()
    probe = fit_probe(features[2, :200], y[:200], l2=1.0)
    predicted = probe.predict(features[2, 200:])
    assert np.corrcoef(predicted, p[200:])[0, 1] > 0.95  # held-out rows
    w = probe.weights * 1.0 / probe.scale  # in the raw features' units: about (2, -1, 0, ...)
    assert w[0] == pytest.approx(2.0, abs=0.5) and w[1] == pytest.approx(-1.0, abs=0.4)
    assert np.abs(w[2:]).max() < 0.4


def test_grouped_cross_validation_picks_the_layer_that_carries_the_signal():
    features, y, _ = planted()
    groups = [f"problem {i // 3}" for i in range(len(y))]  # three states per problem
    chosen = select(features, y, groups, l2_grid=(1.0, 100.0), folds=4)
    assert chosen.layer == 2 and chosen.cv_brier < min(v for k, v in chosen.grid.items() if not k.startswith("2:"))


def test_folds_keep_each_problem_whole():
    groups = ["a", "a", "b", "c", "c", "d", "e"]
    folds = group_folds(groups, 3, seed=1)
    assert sorted(np.concatenate(folds).tolist()) == list(range(7))
    for rows in folds:
        held = {groups[i] for i in rows}
        assert all(groups[i] not in held for other in folds if other is not rows for i in other)


def write_probe(lm, layer: int = 1, seed: int = 0) -> ValueProbe:
    d = lm.model.config.hidden_size
    rng = np.random.default_rng(seed)
    probe = ValueProbe(
        lm.name, lm.fingerprint, precision_of(lm), layer, 1.0, rng.normal(size=d), 0.2, np.zeros(d), np.ones(d),
        {"states": 3, "problems": 1}, {}, "2026-12-07T00:00:00Z",
    )  # fmt: skip
    probe.save(probe_path(lm.name, lm.fingerprint, precision_of(lm)))
    return probe


def test_the_estimator_reads_the_probe_and_redistributes_like_every_estimator(data_dir, tiny):
    probe = write_probe(tiny)
    analyzer = Analyzer(tiny, AnalysisConfig(boundaries="states"))
    result = analyzer.analyze(TRACE, segmenters.get("line")(), estimators.get("probe")())
    context = analyzer.context(TRACE)
    prefixes = result.segmentation.state_prefixes
    read = probe.predict(context.hidden_states(prefixes)[1])
    np.testing.assert_allclose(result.values.values, [*read[:-1], 1.0])
    np.testing.assert_allclose(result.values.components["V_probe"], read)
    np.testing.assert_allclose(result.sigma, redistribute(result.values.values))
    assert result.sigma.sum() == pytest.approx(1.0)
    assert result.cost.tokens_generated == 0


def test_hidden_states_are_the_model_s_own_at_each_state_s_last_token(tiny):
    import torch

    context = Analyzer(tiny).context(TRACE)
    got = context.hidden_states([0, 4])
    with torch.no_grad():
        out = tiny.model(input_ids=torch.tensor([context.ids]), output_hidden_states=True)
    start = len(context.prompt_ids)
    for column, prefix in enumerate([0, 4]):
        expected = np.stack([h[0, start + prefix - 1].numpy() for h in out.hidden_states])
        np.testing.assert_allclose(got[:, column], expected, atol=1e-5)
    calls = tiny.meter.total.calls
    context.hidden_states([4, 0])  # kept with the context: no second pass
    assert tiny.meter.total.calls == calls


def test_a_probe_for_full_precision_is_not_offered_for_4bit(data_dir):
    full = tiny_lm(0)
    write_probe(full)
    assert find_probe(full.fingerprint, precision_of(full)) is not None
    quantized = tiny_lm(0, quantization="4bit-nf4")  # same weights' fingerprint, another precision
    assert find_probe(quantized.fingerprint, precision_of(quantized)) is None
    with pytest.raises(MissingProbeError, match="4bit-nf4"):
        Analyzer(quantized).analyze(TRACE, segmenters.get("line")(), estimators.get("probe")())


def test_the_missing_probe_message_names_the_fit_command(data_dir, tiny):
    with pytest.raises(MissingProbeError) as caught:
        Analyzer(tiny).analyze(TRACE, segmenters.get("line")(), estimators.get("probe")())
    assert f"no value probe for model {tiny.name} (float32/none)" in str(caught.value)
    assert "python -m rredcot_viz probe fit" in str(caught.value)


def test_a_probe_file_for_another_model_is_refused(data_dir, tiny, tmp_path):
    other = tiny_lm(1)
    write_probe(other)
    path = probe_path(other.name, other.fingerprint, precision_of(other))
    with pytest.raises(MissingProbeError, match="was fitted for tiny-llama-1"):
        Analyzer(tiny).analyze(TRACE, segmenters.get("line")(), estimators.get("probe")(probe_file=str(path)))


def test_a_probe_file_round_trips(tmp_path):
    features, y, _ = planted(60, 5)
    probe = fit_probe(features[0], y, 10.0, model="m", fingerprint="f", precision="float32/none", layer=0)
    again = ValueProbe.load(probe.save(tmp_path / "p.json"))
    np.testing.assert_allclose(again.predict(features[0]), probe.predict(features[0]), atol=1e-5)
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(MissingProbeError, match="not a value probe file"):
        ValueProbe.load(tmp_path / "bad.json")
