"""Baselines: flags accepted once (``--write-baseline``) and not reported again (``--baseline``).

A flag is known by the fingerprint of its sentence text alone (no file, no line), so a sentence that
moves, even to another file, keeps its identity; editing the sentence makes it a new flag. Each
entry matches one flag: a sentence written twice needs two entries.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from citeworth.core.io import write_json
from citeworth.drafts import BASELINED, FLAGGED, Sentence

FORMAT = "citeworth-check-baseline/1"


class BaselineError(ValueError):
    """A baseline file that cannot be read."""


def read_baseline(path: Path) -> Counter:
    """Fingerprint -> how many flags with it the baseline accepts."""
    try:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from None
    flags = saved.get("flags") if isinstance(saved, dict) else None
    if not isinstance(flags, list) or saved.get("format") != FORMAT:
        raise BaselineError(f"{path} is not a baseline written by `citeworth check --write-baseline` "
                            f"(expected format {FORMAT!r})")
    return Counter(str(flag.get("fingerprint")) for flag in flags if isinstance(flag, dict))


def write_baseline(path: Path, sentences: Iterable[Sentence]) -> int:
    """Save every flag of ``sentences`` (atomically); returns how many."""
    flags = sorted(({"fingerprint": s.fingerprint, "file": s.file, "text": s.text}
                    for s in sentences if s.status in (FLAGGED, BASELINED)),
                   key=lambda f: (f["file"], f["fingerprint"], f["text"]))
    write_json(path, {"format": FORMAT, "flags": flags})
    return len(flags)


def apply_baseline(sentences: Iterable[Sentence], known: Counter) -> None:
    """Mark flags the baseline accepts as ``baselined``, each entry at most once, in document order."""
    remaining = Counter(known)
    for sentence in sentences:
        if sentence.status == FLAGGED and remaining[sentence.fingerprint] > 0:
            remaining[sentence.fingerprint] -= 1
            sentence.status = BASELINED
