"""The layering rule (docs/ARCHITECTURE.md): a package imports only from its own layer or the layers below,
type-only (``TYPE_CHECKING``) and function-level imports included; and no module imports, at any level, a
module that imports it back (a cycle inside a package, e.g. a function-level import closing config -> methods
-> config), so the tree has no cycles."""

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
    {"ui", "cli", "api", "app"},
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


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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


def module_imports(root: Path) -> dict[str, set[str]]:
    """Each module of the tree and the modules of the tree it imports, at any level (``from a import b`` counts
    as importing ``a.b`` where that is a module, else ``a``)."""
    modules = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name if name in modules else None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {resolve(f"{node.module}.{alias.name}") for alias in node.names}
            elif isinstance(node, ast.Import):
                found |= {resolve(alias.name) for alias in node.names}
        graph[module] = {name for name in found if name is not None and name != module}
    return graph


def cycles(root: Path) -> list[list[str]]:
    """Import cycles between the tree's modules, each as the path from a module back to itself."""
    graph = module_imports(root)
    found, state = [], dict.fromkeys(graph, 0)  # 0 unvisited, 1 on the current path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for other in sorted(graph[module]):
            if state[other] == 1:
                found.append([*path[path.index(other) :], other])
            elif state[other] == 0:
                visit(other, [*path, other])
        state[module] = 2

    for module in graph:
        if state[module] == 0:
            visit(module, [module])
    return found


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(ROOT) == []


def test_the_cycle_check_catches_a_function_level_back_reference(tmp_path):
    """The checker is not vacuous: config importing the methods inside a function, the methods importing config."""
    fake = tmp_path / "rredcot_viz"
    (fake / "training" / "methods").mkdir(parents=True)
    for package in (fake, fake / "training", fake / "training" / "methods"):
        (package / "__init__.py").write_text("")
    (fake / "training" / "config.py").write_text("def names():\n    from rredcot_viz.training import methods\n")
    (fake / "training" / "methods" / "base.py").write_text("from rredcot_viz.training.config import names\n")
    (fake / "training" / "methods" / "__init__.py").write_text("from rredcot_viz.training.methods import base\n")
    assert cycles(fake) == [
        [
            "rredcot_viz.training.config",
            "rredcot_viz.training.methods",
            "rredcot_viz.training.methods.base",
            "rredcot_viz.training.config",
        ]
    ]
