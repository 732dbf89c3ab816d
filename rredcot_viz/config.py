"""Helpers shared by the frozen config dataclasses of every registered method."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TypeVar

from rredcot_viz.errors import ConfigError

C = TypeVar("C")


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


def config_json(config: Any) -> str:
    """Canonical JSON of a config dataclass (enters cache keys and stored run metadata)."""
    return json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)
