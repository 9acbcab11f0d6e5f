"""``MANIFEST.json``: what a release folder holds, with sizes, sha256 digests and origins.

Entries are sorted by file path and dumped with sorted keys, so the manifest only changes when a
file does; ``fetched_at`` is carried over from the previous manifest for a file whose sha256 is
unchanged, so a no-op rerun rewrites identical bytes and DVC sees no change.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from citeworth.core.io import write_json

MANIFEST_NAME = "MANIFEST.json"


@dataclass(frozen=True)
class Entry:
    file: str
    size: int
    sha256: str
    origin: str
    fetched_at: str
    unpacked_from: str | None = None

    def as_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def entry_for(file: str, size: int, sha256: str, origin: str, previous: dict[str, Entry]) -> Entry:
    """The entry of a file on disk; ``fetched_at`` stays as in ``previous`` if the content is unchanged."""
    before = previous.get(file)
    fetched_at = before.fetched_at if before and before.sha256 == sha256 else utc_now()
    return Entry(file=file, size=size, sha256=sha256, origin=origin, fetched_at=fetched_at)


def read_manifest(release_dir: Path) -> dict[str, Entry]:
    """The previous manifest's entries by file path (empty if there is none)."""
    path = release_dir / MANIFEST_NAME
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {item["file"]: Entry(**item) for item in data["files"]}


def write_manifest(release_dir: Path, source: str, release: str, entries: list[Entry]) -> Path:
    path = release_dir / MANIFEST_NAME
    files = [entry.as_json() for entry in sorted(entries, key=lambda e: e.file)]
    write_json(path, {"source": source, "release": release, "files": files})
    return path
