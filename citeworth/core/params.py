"""Read ``params.yaml`` sections into typed stage parameters.

Every stage declares a dataclass of its parameters; the CLI, DVC and Airflow all build it here
from the same YAML section, so the three doors see identical values.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import yaml

T = TypeVar("T")
DEFAULT_PARAMS = Path("params.yaml")
# A profile's key naming the params file it changes (e.g. params/paper.yaml: the paper's settings).
EXTENDS = "extends"
# ``{{section.key}}`` in a params.yaml string: that value of the file, e.g. the download release in
# the curate inputs' paths, so switching the release is one change that every stage follows. Not
# ``${...}``: `dvc exp run -S` rewrites params.yaml through OmegaConf, which would resolve those and
# write the values back, so every stage reading them would look changed to DVC.
REFERENCE = re.compile(r"\{\{([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)\}\}")

# Overrides of params: key path ("rules.min_sentences") -> typed value; see ``apply_overrides``.
Overrides = Mapping[str, Any]
NO_OVERRIDES: Overrides = MappingProxyType({})
_MISSING = object()  # no value at a key path


class ParamsError(ValueError):
    """A params.yaml section does not fit the stage's parameters."""


def load_document(path: Path = DEFAULT_PARAMS) -> dict[str, Any]:
    """The whole params file; a profile (``extends: <file>``, relative to the profile) is that file
    with the profile's values laid over it."""
    return _load_profile(Path(path), ())


def _load_profile(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    if not path.exists():
        raise ParamsError(f"{path} not found: run from the project root or pass --params")
    document = yaml.safe_load(path.read_text()) or {}
    if not isinstance(document, dict):
        raise ParamsError(f"{path}: expected a mapping of sections, got {type(document).__name__}")
    base = document.pop(EXTENDS, None)
    if base is None:
        return document
    base_path = (path.parent / base).resolve()
    if base_path in (*chain, path.resolve()):
        raise ParamsError(f"{path}: {EXTENDS}: {base} makes a cycle")
    return apply_overrides(_load_profile(base_path, (*chain, path.resolve())), document)


def section_of(document: dict[str, Any], section: str, path: Path = DEFAULT_PARAMS) -> dict[str, Any]:
    if section not in document:
        raise ParamsError(f"{path} has no section {section!r} (sections: {', '.join(document)})")
    return dict(document[section] or {})


def load_section(section: str, path: Path = DEFAULT_PARAMS) -> dict[str, Any]:
    """One section as written (``{{...}}`` references unresolved)."""
    return section_of(load_document(path), section, path)


def resolve_references(value: Any, document: dict[str, Any], where: str = "params") -> Any:
    """``value`` with every ``{{section.key}}`` in its strings replaced by that scalar of ``document``
    (itself resolved); a reference to nothing, to a list or mapping, or in a cycle is an error."""
    return _resolve(value, document, where, ())


def _resolve(value: Any, document: dict[str, Any], where: str, chain: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _resolve(v, document, f"{where}.{k}", chain) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, document, where, chain) for v in value]
    if not isinstance(value, str) or "{{" not in value:
        return value
    return REFERENCE.sub(lambda match: _referenced(match.group(1), document, where, chain), value)


def _referenced(name: str, document: dict[str, Any], where: str, chain: tuple[str, ...]) -> str:
    if name in chain:
        raise ParamsError(f"{where}: {{{{{name}}}}} refers to itself ({' -> '.join([*chain, name])})")
    node: Any = document
    for part in name.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ParamsError(f"{where}: {{{{{name}}}}} names no value of params.yaml")
        node = node[part]
    if isinstance(node, (dict, list)) or node is None:
        raise ParamsError(f"{where}: {{{{{name}}}}} must name a string or number, not {node!r}")
    return str(_resolve(node, document, name, (*chain, name)))


def parse_assignments(items: Iterable[str]) -> dict[str, Any]:
    """``key=value`` / ``a.b=value`` strings (``citeworth run -S``) as overrides, each value parsed
    once, as YAML (``-S workers=2`` is the integer 2, ``-S 'models=[a, b]'`` a list)."""
    overrides = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ParamsError(f"override {item!r} is not key=value")
        try:
            overrides[key] = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ParamsError(f"override {key}: {raw!r} is not a YAML value ({exc})") from exc
    return overrides


def apply_overrides(document: MutableMapping, overrides: Overrides, *,
                    own: Callable[[MutableMapping], MutableMapping] = dict,
                    put: Callable[[MutableMapping, str, Any], None] = operator.setitem) -> MutableMapping:
    """``document`` with ``overrides`` merged in by key path: what every door (``citeworth run -S``,
    the Airflow form, a profile's ``extends``) means by an override.

    ``overrides`` maps a key path (``"rules.min_sentences"``) to its typed value; a mapping value
    merges key by key, as its paths would (``{"rules": {"min_sentences": 2}}`` is the same override),
    so only the named leaves change and their siblings stay. Any other value (a list, a scalar,
    null) replaces the old one. Every mapping on a changed path is given its own copy first
    (``own``: a plain copy; params_file's keeps the YAML layout), so a value YAML shares between
    sections (an anchor and its aliases, a ``<<`` merge) keeps its old value everywhere else.
    ``put`` sets one key. ``document`` itself is changed only where ``own`` returns it unchanged.
    """
    document = own(document)
    for path, value in _leaf_paths(overrides, ()):
        _set(document, path, value, own, put)
    return document


def _leaf_paths(overrides: Overrides, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in overrides.items():
        path = (*prefix, *str(key).split("."))
        if isinstance(value, Mapping) and value:
            yield from _leaf_paths(value, path)
        else:
            yield path, value


def _set(document: MutableMapping, path: tuple[str, ...], value: Any, own: Callable, put: Callable) -> None:
    current = _get(document, path)
    if current == value or (isinstance(value, Mapping) and isinstance(current, Mapping)):
        return  # unchanged (an empty mapping merges nothing): the path keeps its own layout
    node = document
    for depth, key in enumerate(path[:-1]):
        child = node.get(key)
        if child is not None and not isinstance(child, MutableMapping):
            what = "a list" if isinstance(child, list) else repr(child)
            raise ParamsError(f"{'.'.join(path)}: {'.'.join(path[:depth + 1])} is {what}, not a mapping")
        child = {} if child is None else own(child)
        if child is not node.get(key):
            put(node, key, child)
        node = child
    put(node, path[-1], copy.deepcopy(value))  # never shared with the caller or another key


def _get(document: Mapping, path: tuple[str, ...]) -> Any:
    node: Any = document
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return _MISSING
        node = node[key]
    return node


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
