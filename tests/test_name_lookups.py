"""Faces select by declared capability, never by name: outside a registry's own package no module looks a
registered name up (``registry.get("rredcot")``, or any ``.get`` with one), compares with one (``name ==
"hybrid"``, ``"mc" in options``, ``kind in ("a", "b")``) or writes one as a default (``segmenter="hybrid"``,
``x or "grpo"``): defaults name a constant (``DEFAULT_SEGMENTER``, ``DEFAULT_METHOD``). Registered names come
from the registries at run time, so a method registered tomorrow is guarded too; the scanner is shown to catch a
planted look-up."""

from __future__ import annotations

import ast
from pathlib import Path

from rredcot_viz.paths import PROJECT_ROOT

COMPARISONS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def registries() -> dict[str, object]:
    """Each registry by the package that registers its names (where naming them is its own business)."""
    from rredcot_viz.attribution import attributions
    from rredcot_viz.diagnosis import detectors
    from rredcot_viz.estimators import estimators
    from rredcot_viz.model.backends.spec import samplers
    from rredcot_viz.segmenters import segmenters
    from rredcot_viz.training.methods.base import methods

    return {
        "rredcot_viz/estimators": estimators,
        "rredcot_viz/segmenters": segmenters,
        "rredcot_viz/diagnosis": detectors,
        "rredcot_viz/attribution": attributions,
        "rredcot_viz/training/methods": methods,
        "rredcot_viz/model/backends": samplers,
    }


def _named(node: ast.AST, names: set[str]) -> str | None:
    """The registered name ``node`` is (a string constant) or holds (a literal tuple, list or set), if any."""
    if isinstance(node, ast.Constant) and node.value in names:
        return node.value
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return next((found for e in node.elts if (found := _named(e, names)) is not None), None)
    return None


def name_lookups(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, registered name) of every ``.get("<name>", ...)``, every ``==``, ``!=``, ``in`` or ``not in`` with a
    registered name (alone or in a literal tuple, list or set), and every default written as one: a parameter's
    default, an ``x or "<name>"`` fallback, a field's value or ``setting("<name>", ...)``. A default names its
    registry's constant (``DEFAULT_SEGMENTER``), so changing it is one line that every face follows."""
    found = []
    for node in ast.walk(ast.parse(source)):
        candidates: list[ast.AST] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            candidates = node.args[:1] if node.args and isinstance(node.args[0], ast.Constant) else []
        elif isinstance(node, ast.Compare) and any(isinstance(op, COMPARISONS) for op in node.ops):
            candidates = [node.left, *node.comparators]
        elif isinstance(node, ast.arguments):
            candidates = [d for d in [*node.defaults, *node.kw_defaults] if d is not None]
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            candidates = node.values
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            candidates = [node.value]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setting":
            candidates = node.args[:1]
        hit = next((side for side in candidates if _named(side, names)), None)
        if hit is not None:
            found.append((hit.lineno, _named(hit, names)))
    return sorted(found)


def sources() -> list[Path]:
    """The library (its app screens included) and, while it exists, the former pages folder."""
    return [*(PROJECT_ROOT / "rredcot_viz").rglob("*.py"), *(PROJECT_ROOT / "pages").glob("*.py")]


def scan(paths: list[Path]) -> list[str]:
    found = []
    for package, registry in registries().items():
        names = set(registry.names())
        for path in paths:
            relative = path.relative_to(PROJECT_ROOT).as_posix() if path.is_relative_to(PROJECT_ROOT) else str(path)
            if relative.startswith(package + "/"):
                continue  # the registry's own package registers and describes its own names
            for line, name in name_lookups(path.read_text(encoding="utf-8"), names):
                found.append(f"{relative}:{line} names {registry.kind} {name!r}")
    return found


def test_the_scanner_flags_each_kind_of_look_up():
    names = {"rredcot", "hybrid", "mc"}
    source = "\n".join(
        [
            'estimator = estimators.get("rredcot")()',
            'if segmenter.name != "hybrid": pass',
            'if "mc" in options: pass',
            'if kind in ("hybrid", "line"): pass',
            'def analyze(trace, segmenter: str = "hybrid", *, estimator="rredcot"): pass',
            'method = given or "mc"',
            'class Config:\n    estimator: str = "rredcot"\n    segmenter: str = setting("hybrid", "help")',
            'x = estimators.get(name)(); y = name == "other"; z = {"mc": 1}; DEFAULT = "hybrid"',
            "def f(segmenter: str = DEFAULT_SEGMENTER): return name or DEFAULT_SEGMENTER",
        ]
    )
    assert name_lookups(source, names) == [
        (1, "rredcot"), (2, "hybrid"), (3, "mc"), (4, "hybrid"), (5, "hybrid"), (6, "mc"), (8, "rredcot"),
        (9, "hybrid"),
    ]  # fmt: skip


def test_the_guard_catches_a_planted_look_up_in_a_screen(tmp_path):
    planted = tmp_path / "rredcot_viz" / "app" / "screens" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text('from rredcot_viz.estimators import estimators\n\nvalue = estimators.get("rredcot")()\n')
    assert f"{planted}:3 names estimator 'rredcot'" in scan([planted])  # (and the training method of that name)


def test_no_face_looks_up_or_compares_a_registered_name():
    """Outside a registry's package, code selects by what a method declares (``having``, ``k_reach``,
    ``follows_steps``...) or by one named default (``DEFAULT_SEGMENTER``), so a newly registered method
    reaches every face and none is special-cased by its name."""
    found = scan(sources())
    assert not found, "\n".join(found)
