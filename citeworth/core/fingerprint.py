"""Fingerprints of finished work: what a cached result must match to be reused.

Anything that skips finished work (a curated shard, a domain cell, a cached model, a transfer
variant, a downstream run, a training checkpoint, a cached embedding) stores
``fingerprint(CODE, **inputs)`` beside its result and reuses the result only while the fingerprint is
unchanged. ``inputs`` are the data versions and params the result came from; ``CODE`` names the
module(s) that produce it (usually ``(__name__,)``, declared next to the code), and the digest covers
every file of their import closure (``citeworth.core.codedeps``: the modules they import,
transitively, lazily too, and the data files of the packages on the way). So an edit to code the
work runs, or to a rule file it reads, redoes the work, and an edit elsewhere (a report's
formatting, another stage) reuses it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from citeworth.core.codedeps import code_files, package_folder
from citeworth.core.io import dumps


def fingerprint(code: Iterable[str], **inputs: Any) -> str:
    """The digest of JSON-able ``inputs`` and of the code the ``code`` modules run."""
    return digest({"code": code_digest(*sorted(set(code))), **inputs})


def digest(obj: Any) -> str:
    """A short, stable digest of JSON-able ``obj`` (canonical JSON, sorted keys)."""
    return hashlib.sha256(dumps(obj).encode()).hexdigest()[:16]


@functools.cache
def code_digest(*modules: str) -> str:
    """sha256 over the files of the code ``modules`` run (``source_files``), by name and content.
    Computed once per process: code does not change under a running process."""
    sha = hashlib.sha256()
    for name, path in source_files(*modules):
        sha.update(f"{name}\0".encode())
        sha.update(path.read_bytes())
        sha.update(b"\0")
    return sha.hexdigest()


def source_files(*modules: str) -> list[tuple[str, Path]]:
    """(stable name, path) of each file of the import closure of ``modules`` (``codedeps.code_files``),
    named by its path from the package's parent folder (the same on every machine)."""
    roots = {package_folder(module.partition(".")[0]) for module in modules}
    return [(next(path.relative_to(root.parent).as_posix() for root in roots if root in path.parents), path)
            for path in code_files(*modules)]


def data_version(paths: Iterable[Path]) -> str:
    """sha256 over the files' names and bytes, in path order: the version of a set of data files."""
    sha = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        sha.update(path.name.encode() + b"\0")
        _hash_bytes(sha, path)
    return sha.hexdigest()


def content_version(paths: Iterable[str | Path]) -> str:
    """sha256 over the files' bytes and their names below the parent of their common folder: the
    version of a set of files wherever they lie. A copy moved elsewhere keeps its version; a renamed
    file, or a renamed folder of several files, does not (readers may read ids from those names)."""
    files = sorted(Path(os.path.abspath(p)) for p in paths)
    common = Path(os.path.commonpath(files))
    base = (common if common.is_dir() else common.parent).parent
    sha = hashlib.sha256()
    for path in files:
        sha.update(path.relative_to(base).as_posix().encode() + b"\0")
        _hash_bytes(sha, path)
    return sha.hexdigest()


def _hash_bytes(sha: Any, path: Path) -> None:
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)


def current_record(path: Path, expected: str) -> dict | None:
    """The JSON object saved at ``path`` if its ``fingerprint`` is ``expected``; None when the file
    is missing, unreadable or made from other inputs or code (the work is to be redone)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("fingerprint") == expected else None
