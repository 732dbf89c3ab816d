"""Settings: the one source of every configurable choice.

A config is a frozen dataclass whose fields are declared with ``setting(default, help, ...)``: the field
carries its help text, choices (a list, a callable such as a registry's ``names``, or a ``Literal`` type) and
range in its metadata. From that one declaration

- ``Settings.__post_init__`` validates choices and ranges (a clear ``ConfigError`` naming the setting);
- the CLI generates one ``--option`` per setting (``cli.options.add_settings_arguments``);
- the app generates one widget per setting (``ui.settings_form.settings_form``),

so a field added to a config appears in both with no other edit (tests/test_settings.py adds one).

A field declared with ``nested(OtherConfig, help)`` holds a whole described config (the trainer's
``CreditConfig``): its settings are listed by ``specs`` under their own names (unique across the nesting), so
the CLI options and the widgets stay flat, and ``from_settings`` / ``from_stored`` route a flat value to the
config that holds it. ``only`` exposes part of the nested config; the rest must keep its defaults. A setting that
was renamed keeps its former name in its config's ``renamed``, so stored configs and old callers still load.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Toy(Settings):
    ...     k: int = setting(4, "how many", low=1, high=9)
    >>> [(s.name, s.kind, s.default) for s in specs(Toy)]
    [('k', 'int', 4)]
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from rredcot_viz.errors import ConfigError

C = TypeVar("C")
KINDS = ("bool", "int", "float", "str", "tuple", "dict")


@dataclass(frozen=True)
class Setting:
    """What a field tells the CLI and the app about itself."""

    help: str
    choices: Sequence[Any] | Callable[[], Sequence[Any]] | None = None
    low: float | None = None
    high: float | None = None
    advanced: bool = False  # listed under "more settings" in the app


@dataclass(frozen=True)
class Nested:
    """What a field holding a whole config tells ``specs``: its help and which of its settings it exposes."""

    help: str
    only: tuple[str, ...] | None = None  # None: all of them


def setting(
    default: Any,
    help: str,
    *,
    choices: Sequence[Any] | Callable[[], Sequence[Any]] | None = None,
    low: float | None = None,
    high: float | None = None,
    advanced: bool = False,
) -> Any:
    """A dataclass field described for the CLI and the app (mutable defaults are copied per instance)."""
    metadata = {"setting": Setting(help, choices, low, high, advanced)}
    if isinstance(default, dict | list | set):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def nested(config_type: type, help: str, *, only: tuple[str, ...] | None = None, start: Any = None) -> Any:
    """A field holding a whole ``config_type`` (default: ``start``, else its defaults), whose settings count as
    this config's own (``only``: just those; the others must keep their defaults)."""
    factory = config_type if start is None else lambda: start
    return field(default_factory=factory, metadata={"nested": Nested(help, tuple(only) if only else None)})


@dataclass(frozen=True)
class SettingSpec:
    """One described field with its type resolved: ``kind`` is one of ``KINDS``; ``optional`` allows None."""

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None
    low: float | None
    high: float | None
    advanced: bool
    optional: bool
    owner: str
    path: tuple[str, ...] = ()  # the nested fields that lead from the listed config to the one that holds it

    def value_in(self, config: Any) -> Any:
        """This setting's value in ``config`` (a config of the type whose ``specs`` listed it)."""
        for name in self.path:
            config = getattr(config, name)
        return getattr(config, self.name)

    def coerce(self, raw: Any) -> Any:
        """A value of this setting from text (the CLI) or from a widget, checked against its kind."""
        if raw is None or (self.optional and isinstance(raw, str) and raw.strip().lower() in ("", "none")):
            if self.optional:
                return None
            raise ConfigError(f"{self.name} needs a value")
        if not isinstance(raw, str):
            return tuple(raw) if self.kind == "tuple" else raw
        text = raw.strip()
        try:
            if self.kind == "bool":
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                return text.lower() in ("true", "1", "yes")
            if self.kind == "int":
                return int(text)
            if self.kind == "float":
                return float(text)
            if self.kind == "tuple":
                return tuple(item.strip() for item in text.split(",") if item.strip())
            if self.kind == "dict":
                value = json.loads(text or "{}")
                if not isinstance(value, dict):
                    raise ValueError
                return value
        except ValueError:
            expected = {"bool": "true or false", "int": "an integer", "float": "a number", "dict": "a JSON object"}[
                self.kind
            ]
            raise ConfigError(f"{self.name} needs {expected}, got {raw!r}") from None
        # text as typed (a delimiter's leading space counts), its escapes such as \n read; other characters kept
        return raw.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in raw else raw

    def check(self, value: Any) -> None:
        if value is None and self.optional:
            return
        if self.choices is not None and value not in self.choices:
            valid = ", ".join(map(str, self.choices))
            raise ConfigError(f"{self.name} must be one of {valid}, got {value!r}")
        numeric = self.kind in ("int", "float") and isinstance(value, int | float) and not isinstance(value, bool)
        if numeric and ((self.low is not None and value < self.low) or (self.high is not None and value > self.high)):
            raise ConfigError(f"{self.name} must be in [{_bound(self.low)}, {_bound(self.high)}], got {value}")


def _bound(value: float | None) -> str:
    return "..." if value is None else f"{value:g}"


class Settings:
    """Base of every described config: validates each setting's choices and range after construction (a nested
    config validates its own; one given as a dict, e.g. from stored JSON, is rebuilt first)."""

    renamed: ClassVar[dict[str, str]] = {}  # a setting's former name -> its name now (stored configs still load)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            meta = f.metadata.get("nested")
            if meta is not None:
                self._check_nested(f.name, meta)
        for spec in specs(type(self)):
            if not spec.path:
                spec.check(getattr(self, spec.name))

    def _check_nested(self, name: str, meta: Nested) -> None:
        nested_type = _type_hints(type(self))[name]
        value = getattr(self, name)
        if isinstance(value, dict):
            value = from_stored(nested_type, value)
            object.__setattr__(self, name, value)  # frozen: set once, while constructing
        if not isinstance(value, nested_type):
            raise ConfigError(f"{name} must be a {nested_type.__name__}, got {type(value).__name__}")
        for spec in specs(nested_type):
            if meta.only is not None and spec.name not in meta.only and spec.value_in(value) != spec.default:
                raise ConfigError(
                    f"{type(self).__name__} does not use {name}.{spec.name} (set to {spec.value_in(value)!r}); "
                    f"leave it at its default {spec.default!r}"
                )


def specs(config_type: type) -> list[SettingSpec]:
    """The described fields of a config type, in declaration order (fields without ``setting`` are internal),
    those of a ``nested`` config in its place, with their ``path``."""
    hints = _type_hints(config_type)
    found = []
    for f in dataclasses.fields(config_type):
        inner = f.metadata.get("nested")
        if inner is not None:
            start = f.default_factory()  # type: ignore[misc]
            found += [
                dataclasses.replace(spec, path=(f.name, *spec.path), default=spec.value_in(start))
                for spec in specs(hints[f.name])
                if inner.only is None or spec.name in inner.only
            ]
            continue
        meta = f.metadata.get("setting")
        if meta is None:
            continue
        kind, optional, literal = _kind(hints[f.name])
        choices = meta.choices() if callable(meta.choices) else meta.choices
        choices = tuple(choices) if choices is not None else literal
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        found.append(
            SettingSpec(
                f.name, kind, default, meta.help, choices, meta.low, meta.high, meta.advanced, optional,
                config_type.__name__,
            )
        )  # fmt: skip
    return found


@functools.cache
def _type_hints(config_type: type) -> dict[str, Any]:
    """A config type's resolved field types, once per type: every config validates itself on construction."""
    return typing.get_type_hints(config_type, include_extras=False)


def _kind(hint: Any) -> tuple[str, bool, tuple[Any, ...] | None]:
    """(kind, optional, Literal choices) of a type hint such as ``int | None`` or ``Literal["a", "b"]``."""
    args = typing.get_args(hint)
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        optional = len(rest) < len(args)
        hint = rest[0] if len(rest) == 1 else str
        args = typing.get_args(hint)
    if typing.get_origin(hint) is Literal:
        return type(args[0]).__name__, optional, tuple(args)
    origin = typing.get_origin(hint) or hint
    name = {bool: "bool", int: "int", float: "float", str: "str", tuple: "tuple", dict: "dict"}.get(origin)
    if name is None:
        raise TypeError(f"a setting's type must be one of {', '.join(KINDS)} (or Optional / Literal), got {hint!r}")
    return name, optional, None


_NO_DEFAULT = object()


def setting_value(config: Any, name: str, default: Any = _NO_DEFAULT) -> Any:
    """The value of setting (or field) ``name`` in ``config``, a nested config's settings included; ``default``
    when it has none (without one: AttributeError)."""
    for spec in specs(type(config)):
        if spec.name == name:
            return spec.value_in(config)
    if name in {f.name for f in dataclasses.fields(config)}:
        return getattr(config, name)
    if default is _NO_DEFAULT:
        raise AttributeError(f"{type(config).__name__} has no setting {name!r}")
    return default


def setting_names(config_type: type) -> list[str]:
    """Every name a config of this type takes: its fields and the settings of its nested configs."""
    nested_specs = [spec for spec in specs(config_type) if spec.path]
    names = []
    for f in dataclasses.fields(config_type):
        names.append(f.name)
        names += [spec.name for spec in nested_specs if spec.path[0] == f.name]
    return names


def with_overrides(config: C, owner: str, overrides: dict[str, Any]) -> C:
    """A copy of ``config`` with ``overrides`` applied (nested settings by their own names); an unknown setting
    names the valid ones."""
    if not overrides:
        return config
    valid = setting_names(type(config))
    unknown = sorted(set(overrides) - set(valid))
    if unknown:
        raise ConfigError(
            f"{owner} has no setting {', '.join(unknown)}; its settings are: {', '.join(valid) or 'none'}"
        )
    return _build(type(config), overrides, config)


def from_settings(config_type: type[C], values: dict[str, Any]) -> C:
    """A config from settings given by name, a nested config's own included (``segments=3`` lands in the nested
    config that has it; a whole nested config may be given too, and named settings then update it). Names it does
    not take are refused by the constructor."""
    return _build(config_type, values, None)


def _build(config_type: type[C], values: dict[str, Any], start: Any) -> C:
    routed = _route(config_type, values)
    direct = {k: v for k, v in values.items() if k not in routed}
    for name, inner in _nested_fields(config_type).items():
        flat = {k: v for k, v in values.items() if routed.get(k) == name}
        if not flat:
            continue
        base = direct.get(name, getattr(start, name) if start is not None else None)
        if isinstance(base, dict):
            base = from_stored(inner, base)
        direct[name] = _build(inner, flat, base) if base is not None else from_settings(inner, flat)
    if start is None:
        return config_type(**direct)
    return dataclasses.replace(start, **direct)


def _nested_fields(config_type: type) -> dict[str, type]:
    hints = _type_hints(config_type)
    return {f.name: hints[f.name] for f in dataclasses.fields(config_type) if "nested" in f.metadata}


def _route(config_type: type, values: dict[str, Any]) -> dict[str, str]:
    """For each given name that is not a field of ``config_type`` but a setting of one of its nested configs, that
    nested field's name (only settings the nesting exposes)."""
    own = {f.name for f in dataclasses.fields(config_type)}
    exposed = {spec.name: spec.path[0] for spec in specs(config_type) if spec.path}
    return {name: exposed[name] for name in values if name not in own and name in exposed}


def current_names(config_type: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with each setting given under a former name (``renamed``, its nested configs' included) under
    its name now; a value given under the current name wins."""
    former = former_names(config_type)
    current = {name: value for name, value in values.items() if name not in former}
    for old, new in former.items():
        if old in values:
            current.setdefault(new, values[old])
    return current


def former_names(config_type: type) -> dict[str, str]:
    """Each former name of a setting of ``config_type`` (its nested configs' included) -> the name now."""
    names = dict(getattr(config_type, "renamed", {}))
    for inner in _nested_fields(config_type).values():
        for old, new in former_names(inner).items():
            names.setdefault(old, new)
    return names


def from_stored(config_type: type[C], saved: dict[str, Any]) -> C:
    """A config rebuilt from its stored JSON (lists back to tuples); settings it no longer has are dropped, and
    those stored under a former name (``renamed``) load under the current one. A nested config is read from its
    own object, or from flat keys where an older version stored its settings flat (e.g. ``segments`` before the
    trainer's credit settings moved into ``credit``); a flat key this config renamed itself (a reset method's
    ``reset_steps``, now its credit's ``k``) wins over the nested object's value."""
    promoted = {new for old, new in getattr(config_type, "renamed", {}).items() if old in saved}
    saved = current_names(config_type, saved)
    values: dict[str, Any] = {}
    nested_fields = _nested_fields(config_type)
    for f in dataclasses.fields(config_type):  # type: ignore[arg-type]
        if f.name in nested_fields:
            inner = nested_fields[f.name]
            own = current_names(inner, saved[f.name]) if isinstance(saved.get(f.name), dict) else {}
            names = setting_names(inner)
            older = {k: v for k, v in saved.items() if k in names and (k not in own or k in promoted)}
            if own or older:
                values[f.name] = from_stored(inner, {**own, **older})
        elif f.name in saved:
            value = saved[f.name]
            values[f.name] = tuple(value) if isinstance(value, list) else value
    return config_type(**values)


def config_json(config: Any) -> str:
    """Canonical JSON of a config dataclass (enters cache keys and stored run metadata)."""
    return json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)
