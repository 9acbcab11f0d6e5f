"""The server's settings, from an editor's ``initializationOptions`` and
``workspace/didChangeConfiguration`` (the ``citeworth`` section, or the section's keys alone):

    model       a model folder written by the train stage (relative: to the workspace root), a
                model name (``context``: models/context) or a profile's build (``study``: the
                best model of ``make study``); default: the best model by dev F1 in the
                workspace's metrics/models.json
    threshold   score at or above which an uncited sentence is flagged (default 0.5)
    topK        suggested entries per flag (default 3)
    bib         a .bib file (or a list) for Markdown drafts whose front matter names none
    works       a cited-works index folder (``citeworth run works``; relative: to the workspace
                root): its works are suggested after the draft's own entries; null: none
    debounceMs  the pause after a change before the draft is checked again (default 300)

They become the ``CheckOptions`` that ``citeworth check`` builds from its command line. A value
of the wrong type or out of range is reported (``window/showMessage``) and the one before kept.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeworth.check.options import CheckOptions

SECTION = "citeworth"
DEBOUNCE_MS = 300
# torch's CPU threads for the model and the encoder: a server scores a paragraph and embeds a
# sentence at a time, beside an editor, where two threads wait for each other. On the shared
# 2-core machine (load 7-10; ad hoc, medians of 5): one 6-sentence paragraph scored by the MiniLM
# sentence model in 0.10 s with 1 thread, 1.2-1.5 s with 2; one sentence embedded in 0.03 s with 1,
# 0.5-1.0 s with 2.
TORCH_THREADS = 1


@dataclass(frozen=True)
class Settings:
    options: CheckOptions = CheckOptions(suggest=True)
    debounce_ms: int = DEBOUNCE_MS


def read_settings(raw: Any, root: Path, current: Settings) -> tuple[Settings, list[str]]:
    """``current`` with the values ``raw`` gives, and a message for each value not taken."""
    section = raw.get(SECTION, raw) if isinstance(raw, dict) else {}
    if not isinstance(section, dict):
        return current, [f"{SECTION} settings must be an object (got {type(section).__name__})"]
    settings, problems = current, []
    for key, value in section.items():
        reader = _READERS.get(key)
        if reader is None:
            problems.append(f"unknown setting {SECTION}.{key} (known: {', '.join(_READERS)})")
            continue
        try:
            settings = reader(settings, value, root)
        except ValueError as exc:
            problems.append(f"{SECTION}.{key} {exc}")
    return settings, problems


def _model(settings: Settings, value: Any, root: Path) -> Settings:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"must be a folder name (got {value!r})")
    return _with(settings, model=Path(value) if value else None)  # resolved against root when loaded


def _threshold(settings: Settings, value: Any, root: Path) -> Settings:
    return _checked(settings, "threshold", value, int | float)


def _top_k(settings: Settings, value: Any, root: Path) -> Settings:
    return _checked(settings, "top_k", value, int)


def _bib(settings: Settings, value: Any, root: Path) -> Settings:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"must be a file name or a list of them (got {value!r})")
    return _with(settings, bibs=tuple(root / name for name in names))


def _works(settings: Settings, value: Any, root: Path) -> Settings:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"must be a folder name (got {value!r})")
    return _with(settings, works=root / value if value else None)


def _debounce(settings: Settings, value: Any, root: Path) -> Settings:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"must be 0 or more milliseconds (got {value!r})")
    return dataclasses.replace(settings, debounce_ms=value)


_READERS = {"model": _model, "threshold": _threshold, "topK": _top_k, "bib": _bib, "works": _works,
            "debounceMs": _debounce}


def _checked(settings: Settings, field: str, value: Any, kind) -> Settings:
    """``settings`` with the option ``field`` set to ``value``, if it has the type ``kind`` and
    ``CheckOptions`` takes it (the range checks ``citeworth check`` makes)."""
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"must be {'an integer' if kind is int else 'a number'} (got {value!r})")
    changed = _with(settings, **{field: value})
    if problem := changed.options.problems().get(field):
        raise ValueError(problem)
    return changed


def _with(settings: Settings, **changes) -> Settings:
    return dataclasses.replace(settings, options=dataclasses.replace(settings.options, **changes))
