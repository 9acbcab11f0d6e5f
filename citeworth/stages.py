"""The pipeline's stages: one function each, shared by the CLI, ``dvc.yaml`` and the Airflow DAGs.

A stage function takes one argument, ``params``, typed with its params dataclass, and returns a
small JSON-able summary. Stages are imported lazily so that running one stage (or parsing a DAG)
never imports the heavy libraries of another.
"""

from __future__ import annotations

import importlib
import textwrap
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from citeworth.core.params import (
    DEFAULT_PARAMS,
    NO_OVERRIDES,
    Key,
    Overrides,
    ParamsError,
    apply_overrides,
    build,
    describe,
    load_document,
    resolve_references,
    section_of,
    short_json,
)

STAGES: dict[str, str] = {
    "download": "citeworth.download.stage:download",
    "pdf2tei": "citeworth.pdf.stage:pdf2tei",
    "curate": "citeworth.curate.stage:curate",
    "curate_baseline": "citeworth.curate.stage:curate",
    "assemble": "citeworth.curate.assemble:assemble",
    "assemble_baseline": "citeworth.curate.assemble:assemble",
    "validate": "citeworth.quality.gate:validate",
    "related_work": "citeworth.corpora.related_work.stage:related_work",
    "silver": "citeworth.corpora.silver.stage:silver",
    "works": "citeworth.suggest.cited_works.stage:works",
    "train": "citeworth.models.train:train",
    "domains": "citeworth.studies.domains.stage:domains",
    "scaling": "citeworth.studies.scaling.stage:scaling",
    "transfer": "citeworth.studies.transfer.stage:transfer",
    "report": "citeworth.report.stage:report",
    "export": "citeworth.corpora.export.stage:export",
}


class UnknownStage(KeyError):
    pass


def stage_function(name: str) -> Callable[[Any], Any]:
    if name not in STAGES:
        raise UnknownStage(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    module, _, attr = STAGES[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def params_class(fn: Callable[[Any], Any]) -> type:
    return typing.get_type_hints(fn)["params"]


def stage_params(name: str, overrides: Overrides = NO_OVERRIDES, path: Path = DEFAULT_PARAMS) -> Any:
    """The typed params of stage ``name``: its params.yaml section with ``overrides`` (key paths in
    the section -> values, see ``apply_overrides``), ``{{section.key}}`` references resolved
    against the whole file."""
    fn = stage_function(name)
    document = load_document(path)
    values = apply_overrides(section_of(document, name, path), overrides)
    return build(params_class(fn), resolve_references(values, document, name), where=name)


class ParamKey(NamedTuple):
    """One key of a stage's params and the value a params file gives it (None: none given there)."""

    key: Key
    given: str | None


def params_keys(name: str, path: Path = DEFAULT_PARAMS) -> list[ParamKey]:
    """Every key of stage ``name``'s params (type, default, help) with the value ``path`` gives
    where it gives one: what ``citeworth run STAGE --help`` and the params reference list."""
    try:
        document = load_document(path)
        given = resolve_references(section_of(document, name, path), document, name)
    except ParamsError:  # no params file here: the keys and defaults alone
        given = {}
    keys = []
    for key in describe(params_class(stage_function(name))):
        value = _given(given, key.path)
        given_here = value is not _ABSENT and not isinstance(value, dict)
        keys.append(ParamKey(key, short_json(value) if given_here else None))
    return keys


def params_help(name: str, path: Path = DEFAULT_PARAMS) -> str:
    """``citeworth run STAGE --help``'s epilog: ``params_keys`` as text."""
    lines = [f"parameters of {name} (its section of {path}; -S KEY=VALUE sets one):", ""]
    for key, given in params_keys(name, path):
        shown = f", {path}: {given}" if given is not None else ""
        lines.append(f"  {key.path}  ({key.type}; default: {key.default}{shown})")
        lines += [f"      {line}" for line in textwrap.wrap(key.help, 94)]
    return "\n".join(lines)


_ABSENT = object()


def _given(values: Any, path: str) -> Any:
    """The value at dotted ``path`` of a section (``_ABSENT``: not given, or below a list/NAME)."""
    for part in path.split("."):
        if not isinstance(values, dict) or part not in values:
            return _ABSENT
        values = values[part]
    return values


def run_stage(name: str, overrides: Overrides = NO_OVERRIDES, path: Path = DEFAULT_PARAMS) -> Any:
    return stage_function(name)(stage_params(name, overrides, path))
