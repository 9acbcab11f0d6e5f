"""A run's parameters into ``params.yaml``: the form of a DAG run becomes the file's values.

A run records its parameters in ``params.yaml`` (as ``dvc exp run -S`` does), so its ``dvc.lock``
entry and a later ``dvc repro`` agree on what was built.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import yaml

from citeworth.core.io import write_text
from citeworth.core.params import ParamsError, build
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

    Only the lines of the changed keys are rewritten (as one-line flow YAML, keeping a trailing
    comment and an anchor: values aliased to it change with it), so the file's comments and layout
    survive. The result must parse, hold the intended values and fit every changed section's
    params class -- else nothing is written and the stage's own message is raised. Returns every
    key whose value changed, aliases included ({}: the file is untouched).
    """
    path = project / "params.yaml"
    text = path.read_text()
    current = yaml.safe_load(text) or {}
    for section in updates:
        if section not in current:
            raise ParamsError(f"params.yaml has no section {section!r} to override")
    for section, values in updates.items():
        for key, value in values.items():
            if (current[section] or {}).get(key) != value:
                text = _set_line(text, section, key, value)
    try:
        edited = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ParamsError(f"cannot write {updates} into params.yaml line by line: {exc}") from exc
    for section, values in updates.items():
        if any(edited[section].get(key) != value for key, value in values.items()):
            raise ParamsError(f"cannot write {section}: {values} into params.yaml line by line")
    changed = _changed(current, edited)
    for section in changed:
        build(params_class(stage_function(section)), edited[section] or {}, where=section)
    if changed:
        write_text(path, text)
        log.info("params.yaml updated: %s", changed)
    return changed


def _changed(before: dict, after: dict) -> dict[str, dict[str, Any]]:
    changed: dict[str, dict[str, Any]] = {}
    for section, values in after.items():
        old = before.get(section) or {}
        diff = {key: value for key, value in (values or {}).items() if old.get(key) != value}
        if diff:
            changed[section] = diff
    return changed


def _set_line(text: str, section: str, key: str, value: Any) -> str:
    """``text`` with ``section.key`` set to ``value``: its (possibly multi-line) value becomes one line."""
    lines = text.splitlines(keepends=True)
    header = re.compile(rf"{re.escape(section)}:\s*(#.*)?$")
    head = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if head is None:
        raise ParamsError(f"params.yaml: section {section!r} is not a block mapping")
    end = next((i for i in range(head + 1, len(lines)) if re.match(r"\S", lines[i])), len(lines))
    flow = yaml.safe_dump(value, default_flow_style=True, width=1 << 20).removesuffix("\n...\n").strip()
    at = next((i for i in range(head + 1, end) if re.match(rf"  {re.escape(key)}:", lines[i])), None)
    if at is None:  # a key the file leaves at its default: add it at the end of the section
        last = max(i for i in range(head, end) if lines[i].strip())
        return "".join(lines[:last + 1] + [f"  {key}: {flow}\n"] + lines[last + 1:])
    stop = next((i for i in range(at + 1, end) if re.match(r" {0,2}\S", lines[i])), end)
    while stop > at + 1 and not lines[stop - 1].strip():
        stop -= 1  # keep the blank lines between sections
    old = lines[at].rstrip("\n")
    comment = re.search(r"\s+#.*$", old) if stop == at + 1 else None
    anchor = re.match(rf"  {re.escape(key)}:\s*(&\S+)", old)
    new = f"  {key}: {anchor.group(1) + ' ' if anchor else ''}{flow}"
    if comment:
        column = comment.start() + len(comment.group()) - len(comment.group().lstrip())
        new = new.ljust(column - 1) + " " + comment.group().lstrip()
    return "".join(lines[:at] + [new + "\n"] + lines[stop:])
