"""What the benches' smoke tests share: a bench imported as its script imports its neighbours, a tiny random
model saved as a model folder (any bench's ``--model``), and the bench's last ``key=value`` line."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).parents[2] / "bench"


def bench(name: str) -> ModuleType:
    """``bench/<name>.py`` as a module, loaded from its file (test packages such as tests/scoring share some
    benches' names), with the bench folder on the path as when it runs as a script."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    module_name = f"bench_script_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, BENCH / f"{name}.py")
        sys.modules[module_name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[module_name])
    return sys.modules[module_name]


def save_tiny_model(folder: Path, hidden: int = 32) -> Path:
    """tests/tiny.py's random Llama and its tokenizer as a model folder ``LanguageModel.load`` reads."""
    from tiny import tiny_model, tiny_tokenizer

    tiny_model(hidden=hidden).save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return folder


def last_line(out: str) -> dict[str, str]:
    """The bench's last line as key -> value (it must be nothing but ``key=value`` pairs)."""
    line = out.strip().splitlines()[-1]
    pairs = [pair.split("=", 1) for pair in line.split()]
    assert all(len(pair) == 2 for pair in pairs), f"the last line is not key=value pairs: {line}"
    return dict(pairs)
