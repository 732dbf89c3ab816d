"""A value probe: logistic regression from one layer's hidden state at a state's last token to the model's own
Monte Carlo success rate there (docs/method.md §6.1), its fitting with cross-validation grouped by problem, and
the small JSON file it lives in, keyed by the model's fingerprint and precision.

Logistic, not ridge: a value is a probability, and the labels are success rates (soft labels k/n), which the
binomial log-loss fits as they are. L2-regularised and fitted by Newton's method in the row space of the
standardised features (an SVD), so a fit costs milliseconds even when states are fewer than hidden units (the
L2 optimum lies in that space). Nothing larger: with a few hundred labelled states a linear probe is what the
data can support (ReProbe, arXiv 2511.06209, and arXiv 2511.14773 find linear probes already predictive).

>>> probe = fit_probe(np.array([[-2.0], [-1.0], [1.0], [2.0]]), np.array([0.0, 0.2, 0.8, 1.0]), l2=0.01)
>>> [round(float(v), 1) for v in probe.predict(np.array([[-2.0], [2.0]]))]
[0.0, 1.0]
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rredcot_viz.errors import MissingProbeError
from rredcot_viz.files import write_text
from rredcot_viz.paths import data_dir

if TYPE_CHECKING:
    from rredcot_viz.model.lm import LanguageModel

FORMAT = "rredcot-value-probe/1"
PROBES_DIR = Path(__file__).resolve().parent.parent / "probes"  # shipped with the package (package data)
L2_GRID: tuple[float, ...] = (1.0, 10.0, 100.0, 1000.0)
FIT_COMMAND = "python -m rredcot_viz probe fit"


@dataclass
class ValueProbe:
    """A fitted probe: V(s) = sigmoid(w . (h_layer(s) - mean) / scale + b), for one model at one precision."""

    model: str
    fingerprint: str
    precision: str
    layer: int
    l2: float
    weights: np.ndarray  # (D,)
    bias: float
    mean: np.ndarray  # (D,)
    scale: np.ndarray  # (D,)
    training: dict[str, Any] = field(default_factory=dict)  # label source, hashes, counts, segmenter
    metrics: dict[str, Any] = field(default_factory=dict)  # cross-validated and held-out figures
    date: str = ""

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Values in (0, 1) for (P, D) hidden states of the probe's layer."""
        z = (np.asarray(features, dtype=float) - self.mean) / self.scale
        return _sigmoid(z @ self.weights + self.bias)

    def describe(self) -> str:
        states, problems = self.training.get("states", "?"), self.training.get("problems", "?")
        return f"layer {self.layer}, L2 {self.l2:g}, fitted on {states} states of {problems} problems ({self.date})"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("weights", "mean", "scale"):
            data[name] = [round(float(v), 7) for v in getattr(self, name)]
        return {"format": FORMAT, **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ValueProbe:
        if data.get("format") != FORMAT:
            raise MissingProbeError(f"not a value probe file (format {data.get('format')!r}, expected {FORMAT!r})")
        fields = {k: v for k, v in data.items() if k != "format"}
        for name in ("weights", "mean", "scale"):
            fields[name] = np.asarray(fields[name], dtype=float)
        return cls(**fields)

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(self.to_json(), indent=1))
        return path

    @classmethod
    def load(cls, path: str | Path) -> ValueProbe:
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise MissingProbeError(f"cannot read value probe {path}: {error}") from None


def precision_of(lm: LanguageModel) -> str:
    """What a probe is keyed by besides the weights: the dtype and the quantization the model runs in (a probe
    fitted on float32 states is not offered for 4-bit states, whose hidden states differ)."""
    return f"{lm.dtype}/{lm.quantization}"


def probe_dirs() -> list[Path]:
    """Where probes are looked for: the data folder's ``probes/`` (fitted here) first, then the shipped ones."""
    return [data_dir() / "probes", PROBES_DIR]


def probe_path(model: str, fingerprint: str, precision: str) -> Path:
    """Where ``probe fit`` writes a model's probe (one per model and precision; a refit replaces it)."""
    name = re.sub(r"[^\w.-]+", "_", model.rstrip("/").split("/")[-1]).strip("_") or "model"  # a plain file name
    return data_dir() / "probes" / f"{name}-{fingerprint[:12]}-{precision.replace('/', '-')}.json"


def find_probe(fingerprint: str, precision: str) -> ValueProbe | None:
    """The probe for this model and precision: a fitted one (the newest) before a shipped one; None if none."""
    for folder in probe_dirs():
        found = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                probe = ValueProbe.load(path)
            except MissingProbeError:
                continue
            if (probe.fingerprint, probe.precision) == (fingerprint, precision):
                found.append(probe)
        if found:
            return max(found, key=lambda p: p.date)
    return None


def missing_probe_message(model: str, precision: str) -> str:
    return (
        f"no value probe for model {model} ({precision}); fit one with `{FIT_COMMAND} --traces FILE` (Monte Carlo "
        f"labels drawn at the traces' states) or `{FIT_COMMAND} --labels BENCH.json`, or on the Compare page"
    )


def require_probe(lm: LanguageModel) -> ValueProbe:
    probe = find_probe(lm.fingerprint, precision_of(lm))
    if probe is None:
        raise MissingProbeError(missing_probe_message(lm.name, precision_of(lm)))
    return probe


# ---------------------------------------------------------------------------------------------- fitting
def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def _newton(
    z: np.ndarray, y: np.ndarray, l2: float, start: np.ndarray | None = None, iterations: int = 50
) -> np.ndarray:
    """[bias, weights] minimising sum BCE(y, sigmoid(z w + b)) + l2/2 |w|^2 (soft labels y in [0, 1]), from
    ``start`` (a fit at a nearby L2: a few steps instead of dozens)."""
    n, d = z.shape
    design = np.hstack([np.ones((n, 1)), z])  # (N, 1+d): the bias is not penalised
    penalty = np.full(d + 1, l2)
    penalty[0] = 1e-8
    theta = np.zeros(d + 1) if start is None else start.copy()
    for _ in range(iterations):
        p = _sigmoid(design @ theta)
        gradient = design.T @ (p - y) + penalty * theta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-5:
            break
    return theta


def _standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    return mean, scale


def _row_space(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, scale and an orthonormal basis (r, D) of the standardised rows' span, where the L2 optimum lies."""
    mean, scale = _standardise(x)
    _, singular, vt = np.linalg.svd((x - mean) / scale, full_matrices=False)
    return mean, scale, vt[singular > singular.max() * 1e-10]


def fit_probe(x: np.ndarray, y: np.ndarray, l2: float, **meta: Any) -> ValueProbe:
    """A probe on features ``x`` (N, D) and success rates ``y`` (N,), fitted in the row space of the standardised
    features (``meta``: the ``ValueProbe`` fields to record)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return _fits(x, y, [l2], **meta)[0]


def _fits(x: np.ndarray, y: np.ndarray, l2_grid: Sequence[float], **meta: Any) -> list[ValueProbe]:
    """``fit_probe`` at each L2 of ``l2_grid``, one basis for all and each fit started from the previous one (the
    grid is walked from the strongest L2 down), returned in the grid's order."""
    mean, scale, basis = _row_space(x)
    z = ((x - mean) / scale) @ basis.T
    defaults = {"model": "", "fingerprint": "", "precision": "", "layer": 0}
    fitted: dict[float, ValueProbe] = {}
    theta = None
    for l2 in sorted(l2_grid, reverse=True):
        theta = _newton(z, y, l2, theta)
        weights = basis.T @ theta[1:]
        fitted[l2] = ValueProbe(**(defaults | meta), l2=l2, weights=weights, bias=float(theta[0]), mean=mean,
                                scale=scale)  # fmt: skip
    return [fitted[l2] for l2 in l2_grid]


def brier(predicted: np.ndarray, target: np.ndarray) -> float:
    """Mean squared error of values against success rates (lower is better; 0.25 is a constant 0.5 on 0/1)."""
    return float(np.mean((np.asarray(predicted) - np.asarray(target)) ** 2))


def group_folds(groups: Sequence[Any], folds: int, seed: int) -> list[np.ndarray]:
    """Each fold's held-out row indices, whole groups (problems) together, groups shuffled by ``seed``."""
    groups = np.asarray([str(g) for g in groups])
    unique = np.unique(groups)
    order = np.random.default_rng(seed).permutation(len(unique))
    fold_of = {unique[i]: rank % folds for rank, i in enumerate(order)}
    assigned = np.array([fold_of[g] for g in groups])
    return [np.flatnonzero(assigned == f) for f in range(min(folds, len(unique)))]


@dataclass
class Selection:
    """The layer and L2 chosen by grouped cross-validation, and the CV Brier of every (layer, L2) tried."""

    layer: int
    l2: float
    cv_brier: float
    grid: dict[str, float]


def select(
    features: np.ndarray,
    y: np.ndarray,
    groups: Sequence[Any],
    layers: Sequence[int] | None = None,
    l2_grid: Sequence[float] = L2_GRID,
    folds: int = 5,
    seed: int = 0,
) -> Selection:
    """Choose the layer and L2 with the lowest cross-validated Brier score, folds grouped by problem so that no
    problem's states are both fitted and scored. ``features``: (L+1, N, D)."""
    layers = list(range(features.shape[0])) if layers is None else list(layers)
    held = group_folds(groups, folds, seed)
    if len(held) < 2:
        raise MissingProbeError("grouped cross-validation needs states of at least 2 problems")
    grid: dict[str, float] = {}
    for layer in layers:
        predictions = {l2: np.empty(len(y)) for l2 in l2_grid}
        for rows in held:
            train = np.setdiff1d(np.arange(len(y)), rows)
            x = np.asarray(features[layer, train], dtype=float)
            for l2, probe in zip(l2_grid, _fits(x, y[train], l2_grid), strict=True):
                predictions[l2][rows] = probe.predict(features[layer, rows])
        for l2 in l2_grid:
            grid[f"{layer}:{l2:g}"] = brier(predictions[l2], y)
    best = min(grid, key=grid.get)
    layer, l2 = best.split(":")
    return Selection(int(layer), float(l2), grid[best], grid)


def data_hash(items: Sequence[str]) -> str:
    """One hash of the training data's identities (trace content hashes and their labels), for the probe file."""
    return hashlib.sha256("\n".join(sorted(items)).encode()).hexdigest()[:16]


def today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
