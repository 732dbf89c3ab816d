"""Turning ``--seg-opt key=value`` / ``--est-opt key=value`` strings into typed config overrides, so a
new method's settings reach the CLI without CLI changes."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from rredcot_viz.errors import ConfigError


def parse_overrides(config_type: type, pairs: list[str] | None) -> dict[str, Any]:
    defaults = {f.name: f for f in dataclasses.fields(config_type)}
    overrides: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ConfigError(f"option {pair!r} must look like key=value")
        if key not in defaults:
            raise ConfigError(f"{config_type.__name__} has no setting {key!r}; settings: {', '.join(defaults)}")
        overrides[key] = _coerce(raw, defaults[key], config_type())
    return overrides


def _coerce(raw: str, field: dataclasses.Field, instance: Any) -> Any:
    default = getattr(instance, field.name)
    if isinstance(default, bool):
        if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ConfigError(f"{field.name} needs true or false, got {raw!r}")
        return raw.lower() in ("true", "1", "yes")
    if isinstance(default, int) or (default is None and raw.isdigit()):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    if isinstance(default, tuple):
        return tuple(item for item in raw.split(",") if item)
    if raw.lower() == "none":
        return None
    return json.loads(raw) if raw.startswith('"') else raw.encode().decode("unicode_escape")


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format``, ``--map`` and ``--encoding``: how to read a dataset file, the same for every command."""
    from rredcot_viz.traces.importers import importers

    parser.add_argument("--format", default="auto", choices=["auto", *importers.names()])
    parser.add_argument(
        "--map",
        action="append",
        metavar="THEIRS=OURS",
        help="rename a field of the file to one of ours (question, cot, steps, reference_answer, "
        "reference_solution, final_answer, correct, first_error, trace_id); repeatable",
    )
    parser.add_argument("--encoding", default="utf-8", help="the file's text encoding (default utf-8)")


def input_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``import_file`` that ``add_input_arguments`` collected."""
    from rredcot_viz.traces.importers.fields import parse_field_map

    return {"field_map": parse_field_map(args.map), "encoding": args.encoding}
