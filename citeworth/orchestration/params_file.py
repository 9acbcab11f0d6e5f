"""A run's parameters into ``params.yaml``: the form of a DAG run becomes the file's values.

A run records its parameters in ``params.yaml`` (as ``dvc exp run -S`` does), so its ``dvc.lock``
entry and a later ``dvc repro`` agree on what was built. The file is edited by a ruamel.yaml round
trip: comments, anchors and aliases, key order and the layout of untouched lines survive (a test
checks that the shipped params.yaml round-trips byte for byte).
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq

from citeworth.core.io import write_text
from citeworth.core.params import ParamsError, build, resolve_references
from citeworth.stages import params_class, stage_function

log = logging.getLogger(__name__)


def form_updates(form: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """params.yaml updates ``{section: {key: value}}`` from an orchestrator's run form.

    Empty (None) fields keep params.yaml's value. ``sample_size`` caps the paragraphs per field of
    both the dataset and its spans-only baseline, so the two stay comparable; ``overrides`` is
    ``{section: {key: value}}`` for everything else.
    """
    fan_out = {
        "source": [("download", "source")],
        "release": [("download", "release")],
        "sample_size": [("assemble", "per_field"), ("assemble_baseline", "per_field")],
        "workers": [("download", "workers"), ("curate", "workers"), ("curate_baseline", "workers")],
        "models": [("train", "models")],
    }
    updates: dict[str, dict[str, Any]] = {}
    for field, targets in fan_out.items():
        if form.get(field) is not None:
            for section, key in targets:
                updates.setdefault(section, {})[key] = form[field]
    for section, values in (form.get("overrides") or {}).items():
        updates.setdefault(section, {}).update(values)
    return updates


def apply_params(project: Path, updates: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Write ``{section: {key: value}}`` (top-level keys of a section) into params.yaml.

    A value that carries an anchor is changed in place, so the values aliased to it change with it.
    The result must fit every changed section's params class -- else nothing is written and the
    stage's own message is raised. Returns every key whose value changed, aliases included ({}: the
    file is untouched).
    """
    path = project / "params.yaml"
    text = path.read_text()
    document = _yaml().load(text)
    missing = [section for section in updates if section not in (document or {})]
    if missing:
        raise ParamsError(f"params.yaml has no section {missing[0]!r} to override")
    for section, values in updates.items():
        if document[section] is None:
            document[section] = CommentedMap()
        for key, value in values.items():
            _assign(document[section], key, value)
    edited = round_trip(document)
    result = yaml.safe_load(edited) or {}
    changed = _changed(yaml.safe_load(text) or {}, result)
    for section in changed:
        values = resolve_references(result[section] or {}, result, section)
        build(params_class(stage_function(section)), values, where=section)
    if changed:
        write_text(path, edited)
        log.info("params.yaml updated: %s", changed)
    return changed


def round_trip(document: Any) -> str:
    """The YAML text of a document loaded with ``_yaml()``: unchanged parts as they were read."""
    out = io.StringIO()
    _yaml().dump(document, out)
    return out.getvalue()


def _yaml() -> YAML:
    """ruamel.yaml's round trip, set to this project's style: 2-space mappings, lists indented under
    their key, ``null`` written out, long lines never re-wrapped."""
    parser = YAML()
    parser.preserve_quotes = True
    parser.width = 1 << 16
    parser.indent(mapping=2, sequence=4, offset=2)
    parser.representer.add_representer(
        type(None), lambda representer, _: representer.represent_scalar("tag:yaml.org,2002:null", "null"))
    return parser


def _assign(section: CommentedMap, key: str, value: Any) -> None:
    """Set ``section[key]``; an anchored list or mapping is updated in place to keep its aliases, and
    a list or mapping written in flow style (``[a, b]``) stays in flow style."""
    current = section.get(key)
    if current == value:
        return
    anchored = isinstance(current, CommentedBase) and current.anchor.value is not None
    if anchored and isinstance(current, list) and isinstance(value, list):
        current[:] = value
    elif anchored and isinstance(current, dict) and isinstance(value, dict):
        current.clear()
        current.update(value)
    elif isinstance(current, CommentedBase) and current.fa.flow_style() and isinstance(value, (list, dict)):
        section[key] = (CommentedSeq if isinstance(value, list) else CommentedMap)(value)
        section[key].fa.set_flow_style()
    else:
        section[key] = value


def _changed(before: dict, after: dict) -> dict[str, dict[str, Any]]:
    changed: dict[str, dict[str, Any]] = {}
    for section, values in after.items():
        old = before.get(section) or {}
        diff = {key: value for key, value in (values or {}).items() if old.get(key) != value}
        if diff:
            changed[section] = diff
    return changed
