"""Settings: the one source of every configurable choice.

A config is a frozen dataclass whose fields are declared with ``setting(default, help, ...)``: the field
carries its help text, choices (a list, a callable such as a registry's ``names``, or a ``Literal`` type) and
range in its metadata. From that one declaration

- ``Settings.__post_init__`` validates choices and ranges (a clear ``ConfigError`` naming the setting);
- the CLI generates one ``--option`` per setting (``cli.options.add_settings_arguments``);
- the app generates one widget per setting (``ui.settings_form.settings_form``),

so a field added to a config appears in both with no other edit (tests/test_settings.py adds one).

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
from typing import Any, Literal, TypeVar

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
    """Base of every described config: validates each setting's choices and range after construction."""

    def __post_init__(self) -> None:
        for spec in specs(type(self)):
            spec.check(getattr(self, spec.name))


def specs(config_type: type) -> list[SettingSpec]:
    """The described fields of a config type, in declaration order (fields without ``setting`` are internal)."""
    hints = _type_hints(config_type)
    found = []
    for f in dataclasses.fields(config_type):
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


def with_overrides(config: C, owner: str, overrides: dict[str, Any]) -> C:
    """A copy of ``config`` with ``overrides`` applied; an unknown setting names the valid ones."""
    if not overrides:
        return config
    valid = [f.name for f in dataclasses.fields(config)]  # type: ignore[arg-type]
    unknown = sorted(set(overrides) - set(valid))
    if unknown:
        raise ConfigError(
            f"{owner} has no setting {', '.join(unknown)}; its settings are: {', '.join(valid) or 'none'}"
        )
    return dataclasses.replace(config, **overrides)  # type: ignore[type-var]


def from_stored(config_type: type[C], saved: dict[str, Any]) -> C:
    """A config rebuilt from its stored JSON (lists back to tuples); settings it no longer has are dropped."""
    names = {f.name for f in dataclasses.fields(config_type)}  # type: ignore[arg-type]
    return config_type(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items() if k in names})


def config_json(config: Any) -> str:
    """Canonical JSON of a config dataclass (enters cache keys and stored run metadata)."""
    return json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)
