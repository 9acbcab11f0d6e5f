"""Read ``params.yaml`` sections into typed stage parameters.

Every stage declares a dataclass of its parameters; the CLI, DVC and Airflow all build it here
from the same YAML section, so the three doors see identical values.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")
DEFAULT_PARAMS = Path("params.yaml")


class ParamsError(ValueError):
    """A params.yaml section does not fit the stage's parameters."""


def load_section(section: str, path: Path = DEFAULT_PARAMS) -> dict[str, Any]:
    if not path.exists():
        raise ParamsError(f"{path} not found: run from the project root or pass --params")
    data = yaml.safe_load(path.read_text()) or {}
    if section not in data:
        raise ParamsError(f"{path} has no section {section!r} (sections: {', '.join(data)})")
    return dict(data[section] or {})


def apply_overrides(values: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``key=value`` / ``a.b=value`` overrides; values are parsed as YAML."""
    values = dict(values)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ParamsError(f"override {item!r} is not key=value")
        *parents, leaf = key.split(".")
        node = values
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(raw)
    return values


def build(cls: type[T], values: dict[str, Any], where: str = "") -> T:
    """Build dataclass ``cls`` from ``values``; unknown keys are an error, nested dataclasses work."""
    names = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ParamsError(f"{where or cls.__name__}: unknown key(s) {unknown}; known: {sorted(names)}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, value in values.items():
        kwargs[name] = _coerce(hints[name], value, f"{where or cls.__name__}.{name}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ParamsError(f"{where or cls.__name__}: {exc}") from exc


def _coerce(hint: Any, value: Any, where: str) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _coerce(inner[0], value, where) if len(inner) == 1 else value
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ParamsError(f"{where}: expected a mapping, got {value!r}")
        return build(hint, value, where)
    if hint is Path:
        return Path(value)
    if origin in (list, tuple) and isinstance(value, (list, tuple)):
        item = args[0] if args else Any
        items = [_coerce(item, v, where) for v in value]
        return tuple(items) if origin is tuple else items
    return value


def to_dict(params: Any) -> dict[str, Any]:
    """The params as plain YAML/JSON-able data (for model cards and provenance)."""

    def plain(value: Any) -> Any:
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    return plain(dataclasses.asdict(params))
