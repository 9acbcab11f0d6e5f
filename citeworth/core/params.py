"""Read ``params.yaml`` sections into typed stage parameters.

Every stage declares a ``Params`` model of its parameters (a pydantic model: each field typed, with
its default and, as its docstring, its help); the CLI, DVC and Airflow all build it here from the
same YAML section, so the three doors see identical values. A field's default lives only in the
code; params.yaml gives the values dvc.yaml needs (required fields) and the demo's own choices.
"""

from __future__ import annotations

import copy
import json
import operator
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal, NamedTuple, Union

import yaml
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

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


# Unknown keys are errors (a typo never silently does nothing); a field's docstring is its help.
PARAMS_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Params(BaseModel):
    """The base of every stage's parameters and of the models nested in them. Built from params.yaml
    by ``build`` (strict types); built in code, values are converted as pydantic's lax mode does and a
    bad one raises pydantic's ValidationError (a ValueError)."""

    model_config = PARAMS_CONFIG


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


def build(cls: Any, values: Any, where: str = "") -> Any:
    """``values`` (a params section: YAML's plain data) as ``cls`` (a ``Params`` model, or any type
    pydantic validates, e.g. a union of models), checked strictly as JSON data would be: ``workers: two``
    or ``workers: "2"`` is not an int, a number is not a string, unknown keys are errors. A failure
    is a ParamsError naming each wrong key by its dotted path from ``where``."""
    try:
        return TypeAdapter(cls).validate_json(json.dumps(to_jsonable_python(values)), strict=True)
    except ValidationError as exc:
        raise ParamsError(_problems(exc.errors(), values, where)) from None


def _problems(errors: list[dict], values: Any, where: str) -> str:
    """One line per wrong key: what it must be (the alternatives of a union joined) and what it is."""
    by_key: dict[str, list[str]] = {}
    got: dict[str, str] = {}
    for error in errors:
        key = _key_path(error["loc"], values, where)
        by_key.setdefault(key, []).append(_requirement(error))
        if error["type"] not in ("missing", "extra_forbidden") and not isinstance(error["input"], dict):
            got[key] = f"; got {error['input']!r}"
    return "; ".join(f"{key}: {', or '.join(dict.fromkeys(needs))}{got.get(key, '')}"
                     for key, needs in by_key.items())


def _requirement(error: dict) -> str:
    if error["type"] == "literal_error":
        return f"must be one of {error['ctx']['expected'].replace(chr(39), '')}"
    if error["type"] == "missing":
        return "required (no default): params.yaml must give it"
    if error["type"] == "extra_forbidden":
        return "unknown key"
    message = error["msg"].removeprefix("Value error, ")
    return message[:1].lower() + message[1:]


def _key_path(loc: tuple, values: Any, where: str) -> str:
    """``loc`` as ``where.a.b[0].c``, without the labels pydantic adds for a union's alternatives:
    a model's ``kind`` (once per mapping) and a type's name below a scalar or a list."""
    path, node, tag_skipped = where, values, False
    for part in loc:
        if isinstance(node, dict):
            if part == node.get("kind") and not tag_skipped:
                tag_skipped = True
                continue
            node, tag_skipped = node.get(part), False
        elif isinstance(node, list) and isinstance(part, int):
            node = node[part] if part < len(node) else None
        elif node is not None:
            continue
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path or "params"


def to_dict(params: Any) -> dict[str, Any]:
    """The params as plain YAML/JSON-able data (for model cards, provenance and fingerprints): paths
    as strings, tuples as lists, fields in declaration order."""
    return to_jsonable_python(params)


class Key(NamedTuple):
    """One key of a params model, as ``citeworth run STAGE --help`` lists it."""

    path: str  # dotted, from the section: rules.mode, catalog.NAME.optim.lr, inputs[].glob
    type: str
    default: str  # "required" where params.yaml must give it
    help: str


def describe(cls: Any, prefix: str = "") -> list[Key]:
    """Every key of ``cls`` (a model, a pydantic dataclass or a union of models), nested ones as
    dotted paths; a key that several alternatives of a union share is listed once, its types joined,
    and a key only some have says which (``kind`` values)."""
    keys: dict[str, Key] = {}
    models = _models(cls)
    owners: dict[str, list[Any]] = {}
    for model in models:
        for name, info in _fields(model).items():
            if info.annotation is type(None):  # a section this kind does not read
                continue
            path = f"{prefix}.{name}" if prefix else name
            owners.setdefault(path, []).append(model)
            default = "required" if info.is_required() else _default(info)
            key = Key(path, _type_name(info.annotation), default, _help(model, name))
            if path in keys:
                types_ = dict.fromkeys([*keys[path].type.split(" | "), *key.type.split(" | ")])
                key = keys[path]._replace(type=" | ".join(types_), help=keys[path].help or key.help)
            keys[path] = key
            for inner, suffix in _nested(info.annotation):
                keys.update((k.path, k) for k in describe(inner, path + suffix))
    for path, have in owners.items():
        if len(have) < len(models) and "kind" in _fields(have[0]):
            kinds = ", ".join(_type_name(_fields(m)["kind"].annotation) for m in have)
            keys[path] = keys[path]._replace(help=f"(kind {kinds}) {keys[path].help}".strip())
    return list(keys.values())


def _models(tp: Any) -> list[Any]:
    if typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (Union, types.UnionType):
        return [m for arg in typing.get_args(tp) for m in _models(arg)]
    return [tp] if _fields(tp) else []


def _fields(tp: Any) -> dict[str, FieldInfo]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.model_fields
    return getattr(tp, "__pydantic_fields__", {})


def _nested(tp: Any) -> list[tuple[Any, str]]:
    """The models inside a field's type, with the path suffix that reaches their keys."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        return _nested(args[0]) if not _models(tp) else [(tp, "")]
    if origin in (Union, types.UnionType):
        return [(tp, "")] if any(_fields(a) for a in _flat(tp)) else []
    if origin is list and args and _models(args[0]):
        return [(args[0], "[]")]
    if origin is dict and args and _models(args[1]):
        return [(args[1], ".NAME")]
    return [(tp, "")] if _fields(tp) else []


def _flat(tp: Any) -> list[Any]:
    if typing.get_origin(tp) is Annotated:
        return _flat(typing.get_args(tp)[0])
    if typing.get_origin(tp) in (Union, types.UnionType):
        return [a for arg in typing.get_args(tp) for a in _flat(arg)]
    return [tp]


def _type_name(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None):
        return "null"
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Literal:
        return " | ".join(map(str, args))
    if origin in (Union, types.UnionType):
        return " | ".join(dict.fromkeys(_type_name(a) for a in args))
    if origin in (list, tuple):
        return f"list[{_type_name(args[0])}]" if args else "list"
    if origin is dict or _fields(tp):
        return "mapping"
    return "path" if tp is Path else getattr(tp, "__name__", str(tp))


def short_json(default: Any) -> str:
    """A value as (at most 60 characters of) JSON; a model as a pointer to its keys."""
    if isinstance(default, BaseModel) or hasattr(default, "__pydantic_fields__"):
        return "(its keys' defaults)"
    text = json.dumps(to_jsonable_python(default), ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _default(info: FieldInfo) -> str:
    return short_json(info.get_default(call_default_factory=True))


def _help(model: Any, name: str) -> str:
    """The field's docstring, or (a subclass narrowing a field's type) its base class's."""
    bases = model.__mro__ if isinstance(model, type) else [model]
    texts = [info.description for base in bases if (info := _fields(base).get(name)) and info.description]
    return " ".join(texts[0].split()) if texts else ""
