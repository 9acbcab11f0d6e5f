"""Fingerprints of finished work: what a cached result must match to be reused.

Anything that skips finished work (a curated shard, a domain cell, a cached model, a transfer
variant, a downstream run) stores ``fingerprint(CODE, **inputs)`` beside its result and reuses the
result only while the fingerprint is unchanged. ``inputs`` are the data versions and params the
result came from; ``CODE`` names the packages or modules whose source produced it (the caller
declares it next to its code, e.g. ``("citeworth.curate", "citeworth.sources", "citeworth.core")``),
so an edit to that code, or to a rule file shipped in those packages, redoes the work instead of
reusing a result of the old code.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from citeworth.core.io import dumps

# Files that are not source: interpreter caches, and the atomic writers' temporaries.
_NOT_SOURCE = ("__pycache__",)
_NOT_SOURCE_SUFFIXES = (".pyc", ".tmp")


def fingerprint(code: Iterable[str], **inputs: Any) -> str:
    """The digest of JSON-able ``inputs`` and of the source files of the ``code`` modules/packages."""
    return digest({"code": code_digest(*sorted(code)), **inputs})


def digest(obj: Any) -> str:
    """A short, stable digest of JSON-able ``obj`` (canonical JSON, sorted keys)."""
    return hashlib.sha256(dumps(obj).encode()).hexdigest()[:16]


@functools.cache
def code_digest(*modules: str) -> str:
    """sha256 over every source file of the named packages (all files below the package folder,
    data files included) and modules, by name and content. Computed once per process: code does
    not change under a running process."""
    sha = hashlib.sha256()
    for module in modules:
        for name, path in source_files(module):
            sha.update(f"{name}\0".encode())
            sha.update(path.read_bytes())
            sha.update(b"\0")
    return sha.hexdigest()


def source_files(module: str) -> list[tuple[str, Path]]:
    """(stable name, path) of each source file of package or module ``module``, in name order."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"no module {module!r} to fingerprint")
    if not spec.submodule_search_locations:
        return [(module, Path(spec.origin))]
    folder = Path(spec.origin).parent
    files = [path for path in folder.rglob("*") if path.is_file()
             and not any(part in _NOT_SOURCE for part in path.relative_to(folder).parts)
             and not path.name.endswith(_NOT_SOURCE_SUFFIXES)]
    return sorted((f"{module}/{path.relative_to(folder).as_posix()}", path) for path in files)


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
