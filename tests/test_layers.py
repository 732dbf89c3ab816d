"""The layering rule (docs/ARCHITECTURE.md): a package imports only from its own layer or the layers below,
type-only (``TYPE_CHECKING``) and function-level imports included, so the tree has no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import rredcot_viz

LAYERS = [  # bottom first; a module may import its own layer and every layer above it in this list
    {"errors", "files", "registry", "paths", "stats", "settings", "types"},
    {"traces"},
    {"model"},
    {"store"},
    {"segmenters"},
    {"scoring"},
    {"estimators"},
    {"engine"},
    {"attribution"},
    {"diagnosis"},
    {"training"},
    {"jobs"},
    {"workflows"},
    {"figures"},
    {"ui", "cli"},
    {"__main__"},
]
ROOT = Path(rredcot_viz.__file__).parent


def layer_of(unit: str) -> int:
    found = [i for i, layer in enumerate(LAYERS) if unit in layer]
    assert found, f"rredcot_viz.{unit} is in no layer: add it to LAYERS and to docs/ARCHITECTURE.md"
    return found[0]


def unit_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "rredcot_viz" and len(parts) > 1 else None


def imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] if unit_of(node.module) else [f"{node.module}.{a.name}" for a in node.names]
            found += [(node.lineno, name) for name in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in found if unit_of(name)]


def violations() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        own = relative.parts[0].removesuffix(".py") if len(relative.parts) > 1 or relative.stem != "__init__" else None
        if own is None:
            continue
        for line, name in imports(path):
            other = unit_of(name)
            if other != own and layer_of(other) > layer_of(own):
                found.append(f"rredcot_viz/{relative}:{line} ({own}) imports {name} ({other}, a higher layer)")
    return found


def test_imports_only_point_downwards():
    assert violations() == []


def test_the_rule_catches_an_upward_import(tmp_path, monkeypatch):
    """The checker is not vacuous: a model module importing the engine is reported."""
    fake = tmp_path / "rredcot_viz"
    (fake / "model").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "model" / "bad.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                           "    from rredcot_viz.engine import Analyzer\n")  # fmt: skip
    monkeypatch.setattr(__import__(__name__), "ROOT", fake)
    assert violations() == ["rredcot_viz/model/bad.py:3 (model) imports rredcot_viz.engine (engine, a higher layer)"]
