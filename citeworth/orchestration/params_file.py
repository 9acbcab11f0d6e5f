"""A run's parameters into ``params.yaml``: the form of a DAG run becomes the file's values.

A run records its parameters in ``params.yaml`` (as ``dvc exp run -S`` does), so its ``dvc.lock``
entry and a later ``dvc repro`` agree on what was built. The form's values are merged by key path
with ``core.params.apply_overrides``, the function ``citeworth run -S`` uses, into a ruamel.yaml
round trip of the file: comments, anchors and aliases, key order and the layout of untouched lines
survive (a test checks that the shipped params.yaml round-trips byte for byte).
"""

from __future__ import annotations

import copy
import io
import logging
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import Comment, CommentedBase, CommentedMap, CommentedSeq, Format, merge_attrib

from citeworth.core.io import write_text
from citeworth.core.params import (
    Overrides,
    ParamsError,
    apply_overrides,
    build,
    load_document,
    resolve_references,
)
from citeworth.stages import params_class, stage_function

log = logging.getLogger(__name__)


PROFILES_DIR = Path("params")


def profile_file(root: Path, name: str) -> Path:
    path = root / PROFILES_DIR / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (root / PROFILES_DIR).glob("*.yaml"))
        raise ParamsError(f"no profile {name!r}: {path} does not exist "
                          f"(profiles: {', '.join(known) or 'none'})")
    return path


def profile_updates(root: Path, name: str) -> dict[str, Any]:
    """What params/<name>.yaml changes in ``root``'s params.yaml, as overrides (key paths to values)."""
    return changed_values(load_document(root / "params.yaml"), load_document(profile_file(root, name)))


def form_updates(form: dict[str, Any], root: Path | None = None) -> dict[str, Any]:
    """The overrides of params.yaml (see ``apply_overrides``) that an orchestrator's run form asks for.

    ``profile`` (a run of the study, say) lays params/<profile>.yaml of the project at ``root`` over
    params.yaml first; the other fields apply on top of it. Empty (None) fields keep params.yaml's
    value. ``sample_size`` caps the paragraphs per field of
    both the dataset and its spans-only baseline, so the two stay comparable; ``overrides`` is
    ``{section: {key: value}}`` (or ``{"section.key": value}``) for everything else, merged by key
    path as ``citeworth run SECTION -S key=value`` merges: ``{"curate_baseline": {"rules":
    {"min_sentences": 2}}}`` changes that one key, and the rules keep ``mode: spans-only``.
    """
    fan_out = {
        "source": [("download", "source")],
        "release": [("download", "release")],
        "sample_size": [("assemble", "per_field"), ("assemble_baseline", "per_field")],
        "models": [("train", "models")],
    }
    profile = form.get("profile")
    updates: dict[str, Any] = profile_updates(root or Path.cwd(), profile) if profile else {}
    for field, targets in fan_out.items():
        if form.get(field) is not None:
            for section, key in targets:
                updates.setdefault(section, {})[key] = form[field]
    return apply_overrides(updates, form.get("overrides") or {})  # an explicit override wins


def apply_params(project: Path, overrides: Overrides) -> dict[str, Any]:
    """Write ``overrides`` (key paths from the file's top, e.g. ``{"train": {"seeds": [1, 2]}}``) into
    the project's params.yaml.

    Returns every value that changed, by key path ({}: the file is untouched); nothing is written
    when a value does not fit its stage (see ``updated_params``).
    """
    path = project / "params.yaml"
    edited, changed = updated_params(path.read_text(), overrides)
    if changed:
        write_text(path, edited)
        log.info("params.yaml updated: %s", ", ".join(sorted(changed)))  # the sections; the values are in it
    return changed


def updated_params(text: str, overrides: Overrides) -> tuple[str, dict[str, Any]]:
    """The params.yaml ``text`` with ``overrides`` applied as every door applies them, and every
    value that changed.

    Only the named keys change: a value that YAML shares (an anchor and its aliases, a ``<<``
    merge) keeps its old value in the sections that did not name it (written out at the first of
    them, with the anchor if others still alias it). The result must fit every changed section's
    params class, else the stage's own message is raised.
    """
    document = _yaml().load(text) or CommentedMap()
    missing = [section for section in apply_overrides({}, overrides) if section not in document]
    if missing:
        raise ParamsError(f"params.yaml has no section {missing[0]!r} to override")
    edited = round_trip(apply_overrides(document, overrides, own=_own, put=_put))
    result = yaml.safe_load(edited) or {}
    changed = changed_values(yaml.safe_load(text) or {}, result)
    for section in changed:
        if not isinstance(result[section], dict):
            raise ParamsError(f"{section}: expected a mapping of params, got {result[section]!r}")
        values = resolve_references(result[section], result, section)
        build(params_class(stage_function(section)), values, where=section)
    return (edited if changed else text), changed


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


def _own(node: Any) -> Any:
    """``node``, or a copy of it when it carries an anchor (aliases and merges share it): the copy has
    the node's own keys, merges, comments and style, and no anchor, which stays with the value the
    aliases keep."""
    if not isinstance(node, CommentedMap) or node.anchor.value is None:
        return node
    mine = CommentedMap(node.non_merged_items())
    setattr(mine, Format.attrib, copy.copy(node.fa))
    setattr(mine, Comment.attrib, copy.deepcopy(node.ca))
    if getattr(node, merge_attrib, None):
        mine.add_yaml_merge(copy.copy(getattr(node, merge_attrib)))
    return mine


def _put(mapping: MutableMapping, key: str, value: Any) -> None:
    """``mapping[key] = value``, keeping the file's layout: a list or mapping written in flow style
    (``[a, b]``) stays in flow style, and a new key goes right below the mapping's last line, above
    the blank lines and comments that followed it."""
    current = mapping.get(key)
    if (isinstance(current, CommentedBase) and current.fa.flow_style()
            and isinstance(value, (list, dict)) and not isinstance(value, CommentedBase)):
        value = (CommentedSeq if isinstance(value, list) else CommentedMap)(value)
        value.fa.set_flow_style()
    if isinstance(mapping, CommentedMap) and not mapping._unmerged_contains(key):
        _move_trailing_lines(mapping, key)
    mapping[key] = value


def _move_trailing_lines(mapping: CommentedMap, key: str) -> None:
    """Move what follows the last line of ``mapping`` (ruamel keeps it as the end-of-line comment of
    the deepest last entry) onto ``key``, about to be added at its end."""
    holder, last, slot = None, None, 0
    node: Any = mapping
    while isinstance(node, (CommentedMap, CommentedSeq)) and node and node.anchor.value is None:
        if isinstance(node, CommentedMap):
            holder, last, slot = node, [k for k, _ in node.non_merged_items()][-1], 2
        else:
            holder, last, slot = node, len(node) - 1, 0
        node = node[last]
        if isinstance(node, CommentedBase) and node.fa.flow_style():
            break
    comments = holder.ca.items.get(last) if holder is not None else None
    token = comments[slot] if comments else None
    if token is None:
        return
    end_of_line, _, following = token.value.partition("\n")
    if not following:
        return
    moved = copy.copy(token)
    moved.value = "\n" + following
    token.value = end_of_line + "\n"
    mapping.ca.items[key] = [None, None, moved, None]


def changed_values(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``after`` that differ from ``before``'s, nested by key path down to the leaves
    (a mapping that gained or changed a key shows just that key)."""
    changed: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            if inner := changed_values(old, value):
                changed[key] = inner
        elif old != value or key not in before:
            changed[key] = value
    return changed
