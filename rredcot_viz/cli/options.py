"""Command-line options generated from the config dataclasses' settings (``rredcot_viz.settings``), so a
setting added to a config is an option with no CLI change; and the options every file-reading command shares.

    add_settings_arguments(parser, [HybridSegmenterConfig, ...], prefix="seg")   # --seg-merge-score, ...
    segmenter = HybridSegmenter(**settings_from_args(args, HybridSegmenterConfig, prefix="seg"))
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from rredcot_viz.errors import ConfigError
from rredcot_viz.settings import SettingSpec, former_names, setting_value, specs


def add_settings_arguments(
    parser: argparse.ArgumentParser,
    config_types: Sequence[type] | Mapping[str, type],
    *,
    prefix: str = "",
    title: str | None = None,
    initial: Any = None,
    aliases: Mapping[str, Sequence[str]] | None = None,
    former: Mapping[str, Sequence[str]] | None = None,
    exclude: tuple[str, ...] = (),
) -> None:
    """One ``--[prefix-]name`` option per setting of any of ``config_types`` (``settings.setting``; a mapping
    names each type, e.g. by its registered method), with its help, choices and default; an option left out keeps
    the default. A setting only some of the types have says which in its help, and a default that differs
    between them is given per type. ``initial`` (a config the command starts from, e.g. a preset) supplies the
    defaults shown where it has the setting; ``aliases`` gives a setting extra flags (``{"k": ["--k"]}``). Former
    flags still work and their help calls them deprecated: those in ``former`` (``{"k": ["--seg-k"]}``, the
    generated flag included) and those of a setting's former names (a config's ``renamed``: ``--segments``)."""
    named = config_types if isinstance(config_types, Mapping) else {_short(t.__name__): t for t in config_types}
    group = parser.add_argument_group(title) if title else parser
    by_name: dict[str, dict[str, SettingSpec]] = {}
    renamed: dict[str, list[str]] = {}
    for old, new in (pair for config_type in named.values() for pair in former_names(config_type).items()):
        renamed.setdefault(new, []).append(_flag(prefix, old))
    for label, config_type in named.items():
        for spec in specs(config_type):
            if spec.name not in exclude:
                by_name.setdefault(spec.name, {})[label] = spec
    for name, found in by_name.items():
        spec = next(iter(found.values()))
        scope = "" if len(found) == len(named) or len(named) == 1 else f" [{', '.join(found)}]"
        defaults: dict[str, list[str]] = {}
        for label, owned in found.items():
            start = owned.default if initial is None else setting_value(initial, name, owned.default)
            defaults.setdefault(_shown(owned, start), []).append(label)
        shown = next(iter(defaults)) if len(defaults) == 1 else "; ".join(f"{v} for {', '.join(k)}" for v, k in
                                                                          defaults.items())  # fmt: skip
        old = list(dict.fromkeys([*(former or {}).get(name, ()), *renamed.get(name, ())]))
        flags = [flag for flag in [_flag(prefix, name), *(aliases or {}).get(name, ())] if flag not in old] + old
        deprecated = f"; {', '.join(old)}: former name{'s' if len(old) > 1 else ''}, deprecated" if old else ""
        help_text = f"{_shared_help(found)}{scope} (default {shown}{deprecated})".replace("%", "%%")
        options: dict[str, Any] = {"dest": _dest(prefix, name), "default": None, "help": help_text}
        if spec.kind == "bool":
            options["action"] = argparse.BooleanOptionalAction
        elif all(s.choices is not None for s in found.values()):  # the union, when types offer different ones
            options["choices"] = list(dict.fromkeys(str(c) for s in found.values() for c in s.choices or ()))
        else:
            options["metavar"] = spec.kind.upper()
        group.add_argument(*dict.fromkeys(flags), **options)


def settings_from_args(
    args: argparse.Namespace, config_type: type, *, prefix: str = "", what: str | None = None
) -> dict[str, Any]:
    """The settings of ``config_type`` given on the command line (coerced and checked); an option given that
    ``config_type`` does not have is an error naming ``what`` (default: the type) and the options it has."""
    mine = {spec.name: spec for spec in specs(config_type)}
    given: dict[str, Any] = {}
    for name, raw in given_settings(args, prefix=prefix).items():
        if name not in mine:
            valid = ", ".join(_flag(prefix, n) for n in mine) or "none"
            raise ConfigError(
                f"{_flag(prefix, name)} is not a setting of {what or _short(config_type.__name__)}; its settings: "
                f"{valid}"
            )
        given[name] = mine[name].coerce(raw)
    return given


def method_settings(
    args: argparse.Namespace, config_types: Mapping[str, type], *, prefix: str, known: Mapping[str, type]
) -> dict[str, dict[str, Any]]:
    """For several methods run together (``compare``): each method's settings among the options given under one
    ``prefix``. An option none of them has is an error naming the ``known`` methods that have it."""
    given = given_settings(args, prefix=prefix)
    chosen: dict[str, dict[str, Any]] = {method: {} for method in config_types}
    for name, raw in given.items():
        takers = [method for method, config_type in config_types.items() if _spec(config_type, name) is not None]
        if not takers:
            owners = [method for method, config_type in known.items() if _spec(config_type, name) is not None]
            raise ConfigError(
                f"{_flag(prefix, name)} is a setting of {', '.join(owners) or 'no method'}, which is not being run"
            )
        for method in takers:
            chosen[method][name] = _spec(config_types[method], name).coerce(raw)  # type: ignore[union-attr]
    return chosen


def given_settings(args: argparse.Namespace, *, prefix: str = "") -> dict[str, str]:
    """The raw text of every generated option under ``prefix`` that was given, by setting name."""
    head = _dest(prefix, "")
    return {key[len(head) :]: raw for key, raw in vars(args).items() if key.startswith(head) and raw is not None}


def given_setting(args: argparse.Namespace, name: str, *, prefix: str = "") -> Any:
    """The raw text of one generated option, or None when it was left out."""
    return getattr(args, _dest(prefix, name), None)


def _spec(config_type: type, name: str) -> SettingSpec | None:
    return next((spec for spec in specs(config_type) if spec.name == name), None)


def _dest(prefix: str, name: str) -> str:
    return f"setting:{prefix}:{name}"  # ':' never occurs in a name, so one prefix never claims another's options


def _flag(prefix: str, name: str) -> str:
    return "--" + "-".join(part.replace("_", "-") for part in (prefix, name) if part)


def _shown(spec: SettingSpec, value: Any) -> str:
    if value is None or (spec.kind == "tuple" and not value):
        return "none"
    if spec.kind == "tuple":
        return ",".join(map(str, value))
    return repr(value) if spec.kind == "str" and value != value.strip() else str(value)


def _shared_help(found: Mapping[str, SettingSpec]) -> str:
    """One help for a setting several types describe: their common first clause, else each type's own."""
    helps: dict[str, list[str]] = {}
    for label, spec in found.items():
        helps.setdefault(spec.help, []).append(label)
    first = next(iter(helps)).split("; ")[0]
    if len(helps) == 1 or all(text.startswith(first) for text in helps):
        return next(iter(helps)) if len(helps) == 1 else first
    return "; ".join(f"{', '.join(labels)}: {text}" for text, labels in helps.items())


def _short(owner: str) -> str:
    return owner.removesuffix("Config") or owner


def at_least_one(text: str) -> int:
    """An argparse type for counts such as ``--limit``: a whole number of at least 1 (0 or -1 would read nothing or
    everything depending on the command, so neither is accepted)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value} (leave the option out to take every record)")
    return value


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format``, ``--map``, ``--encoding`` and ``--label-base``: how to read a dataset file, the same for
    every command."""
    from rredcot_viz.traces.importers import importers
    from rredcot_viz.traces.importers.base import LABEL_BASES

    parser.add_argument("--format", default="auto", choices=["auto", *importers.names()])
    parser.add_argument(
        "--map",
        action="append",
        metavar="THEIRS=OURS",
        help="rename a field of the file to one of ours (question, cot, steps, reference_answer, "
        "reference_solution, final_answer, correct, first_error, trace_id); repeatable",
    )
    parser.add_argument("--encoding", default="utf-8", help="the file's text encoding (default utf-8)")
    parser.add_argument(
        "--label-base",
        type=int,
        choices=LABEL_BASES,
        default=0,
        help="the number of the first step in the file's first-error labels: 0 (ours and ProcessBench's, the "
        "default) or 1 (steps counted from 1; -1 still means no error)",
    )


def input_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``import_file`` that ``add_input_arguments`` collected."""
    from rredcot_viz.traces.importers.fields import parse_field_map

    return {"field_map": parse_field_map(args.map), "encoding": args.encoding, "label_base": args.label_base}


def add_folder_arguments(parser: argparse.ArgumentParser) -> None:
    """``--split`` and ``--config``: which part of a dataset folder to read (a folder of several splits or configs
    is refused without them, naming the ones it has)."""
    parser.add_argument("--split", help="the split to read from a dataset folder (train, test, ...)")
    parser.add_argument("--config", help="the config (subset) to read from a dataset folder that holds several")


def folder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``import_file`` that ``add_folder_arguments`` collected."""
    return {"split": args.split, "config": args.config}
