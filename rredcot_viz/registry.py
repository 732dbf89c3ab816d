"""The one registry class: every pluggable concept (segmenter, estimator, importer, ...) keeps its
implementations in a ``Registry`` so that adding one is one file plus one ``@register`` line, and the CLI and
the app list the choices from ``names()``. What an implementation can do is declared on its class (e.g. an
estimator's ``live`` or ``credit``) and selected with ``having``, so no face keeps its own list of names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from rredcot_viz.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named implementations of one concept, registered explicitly (no subclass discovery).

    >>> things = Registry[type]("thing")
    >>> @things.register("a")
    ... class A: ...
    >>> things.get("a") is A, things.names()
    (True, ['a'])
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}

    def register(self, name: str, *, aliases: tuple[str, ...] = (), replace: bool = False) -> Callable[[T], T]:
        """Decorator that registers ``obj`` under ``name`` (and ``aliases``, which resolve to it but are not
        listed by ``names()``); a duplicate name raises unless ``replace``."""

        def decorate(obj: T) -> T:
            for key in (name, *aliases):
                if (key in self._items or key in self._aliases) and not replace:
                    raise ValueError(f"{self.kind} {key!r} is already registered; pass replace=True to override it")
            self._items[name] = obj
            self._aliases.update({alias: name for alias in aliases})
            return obj

        return decorate

    def unregister(self, name: str) -> T:
        """Remove ``name`` and its aliases (a plugin unloading, or a test's toy implementation); returns it."""
        name = self.resolve(name)
        self._aliases = {alias: target for alias, target in self._aliases.items() if target != name}
        return self._items.pop(name)

    def resolve(self, name: str) -> str:
        """The registered name for ``name`` or one of its aliases."""
        name = self._aliases.get(name, name)
        if name not in self._items:
            raise UnknownNameError(self.kind, name, self.names())
        return name

    def get(self, name: str) -> T:
        return self._items[self.resolve(name)]

    def names(self) -> list[str]:
        return list(self._items)

    def having(self, **capabilities: object) -> list[str]:
        """The names, in registration order, whose implementation declares every ``capability=value`` given
        (class attributes such as ``live=True``), so pickers select by what a method can do, not by name.

        >>> things = Registry[type]("thing")
        >>> _ = things.register("slow")(type("Slow", (), {"live": False}))
        >>> _ = things.register("fast")(type("Fast", (), {"live": True}))
        >>> things.having(live=True)
        ['fast']
        """
        return [
            name
            for name, obj in self._items.items()
            if all(getattr(obj, capability) == value for capability, value in capabilities.items())
        ]

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
