"""Command-line options generated from the config dataclasses' settings (``rredcot_viz.settings``), so a
setting added to a config is an option with no CLI change; and the options every file-reading command shares."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from rredcot_viz.errors import ConfigError
from rredcot_viz.settings import specs


def add_settings_arguments(
    parser: argparse.ArgumentParser, config_types: list[type], *, prefix: str = "", title: str | None = None
) -> None:
    """One ``--[prefix-]name`` option per setting of any of ``config_types`` (``settings.setting``), with its
    help, choices and default; an option left out keeps the config's default. A setting only some of the types
    have says which in its help."""
    group = parser.add_argument_group(title) if title else parser
    by_name: dict[str, list] = {}
    for config_type in config_types:
        for spec in specs(config_type):
            by_name.setdefault(spec.name, []).append(spec)
    owners = {t.__name__ for t in config_types}
    for name, found in by_name.items():
        spec = found[0]
        where = {s.owner for s in found}
        scope = "" if where == owners or len(owners) == 1 else f" [{', '.join(sorted(_short(o) for o in where))}]"
        flag = "--" + (f"{prefix}-" if prefix else "") + name.replace("_", "-")
        shown = ",".join(map(str, spec.default)) if spec.kind == "tuple" else spec.default
        help_text = f"{spec.help}{scope} (default {shown})".replace("%", "%%")
        options: dict[str, Any] = {"dest": _dest(prefix, name), "default": None, "help": help_text}
        if spec.kind == "bool":
            options["action"] = argparse.BooleanOptionalAction
        elif spec.choices is not None:
            options["choices"] = [str(c) for c in spec.choices]
        else:
            options["metavar"] = spec.kind.upper()
        group.add_argument(flag, **options)


def settings_from_args(args: argparse.Namespace, config_type: type, *, prefix: str = "") -> dict[str, Any]:
    """The settings of ``config_type`` given on the command line (coerced and checked); an option given that
    ``config_type`` does not have is an error naming the settings it has."""
    mine = {spec.name: spec for spec in specs(config_type)}
    given: dict[str, Any] = {}
    for key, raw in vars(args).items():
        if raw is None or not key.startswith(_dest(prefix, "")):
            continue
        name = key[len(_dest(prefix, "")) :]
        if name not in mine:
            flag = "--" + (f"{prefix}-" if prefix else "") + name.replace("_", "-")
            raise ConfigError(
                f"{flag} is not a setting of {_short(config_type.__name__)}; its settings: {', '.join(mine)}"
            )
        given[name] = mine[name].coerce(raw)
    return given


def given_setting(args: argparse.Namespace, name: str, *, prefix: str = "") -> Any:
    """The raw text of one generated option, or None when it was left out."""
    return getattr(args, _dest(prefix, name), None)


def _dest(prefix: str, name: str) -> str:
    return f"setting_{prefix}_{name}" if prefix else f"setting__{name}"


def _short(owner: str) -> str:
    return owner.removesuffix("Config") or owner


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
