"""``MANIFEST.json``: what a release folder holds, with sizes, sha256 digests and origins.

The manifest is part of the release's DVC output, so it holds only what the files are, never
when they arrived: entries are sorted by file path and dumped with sorted keys, and the same
source release fetched on two machines gives byte-identical manifests (one data version). When
each file was fetched goes to the fetch log beside the release folder
(``<release>.fetch-log.jsonl``, outside the DVC output), one line per transfer.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from citeworth.core.io import dumps, write_json

MANIFEST_NAME = "MANIFEST.json"
FETCH_LOG_SUFFIX = ".fetch-log.jsonl"
_FETCH_LOG_LOCK = threading.Lock()  # downloads run in threads; one line is written at a time


@dataclass(frozen=True)
class Entry:
    file: str
    size: int
    sha256: str
    origin: str
    unpacked_from: str | None = None

    def as_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def read_manifest(release_dir: Path) -> dict[str, Entry]:
    """The previous manifest's entries by file path (empty if there is none).

    Keys an older manifest had (``fetched_at``) are dropped; the next write leaves them out."""
    path = release_dir / MANIFEST_NAME
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    known = {f.name for f in fields(Entry)}
    return {item["file"]: Entry(**{k: v for k, v in item.items() if k in known}) for item in data["files"]}


def write_manifest(release_dir: Path, source: str, release: str, entries: list[Entry]) -> Path:
    path = release_dir / MANIFEST_NAME
    files = [entry.as_json() for entry in sorted(entries, key=lambda e: e.file)]
    write_json(path, {"source": source, "release": release, "files": files})
    return path


def fetch_log_path(release_dir: Path) -> Path:
    """The fetch log of ``raw/<source>/<release>``: ``raw/<source>/<release>.fetch-log.jsonl``."""
    return release_dir.with_name(release_dir.name + FETCH_LOG_SUFFIX)


def log_fetch(release_dir: Path, entry: Entry) -> None:
    """Append that ``entry`` was just transferred (with the UTC time) to the release's fetch log."""
    line = dumps({**entry.as_json(), "fetched_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
    path = fetch_log_path(release_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _FETCH_LOG_LOCK, open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
