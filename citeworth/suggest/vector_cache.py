"""The encoder's vectors kept between runs, so a draft re-checked while it is written embeds only
the sentences and entries that changed.

One SQLite file in the user's cache folder (``$XDG_CACHE_HOME/citeworth``, else
``~/.cache/citeworth``): a row per (encoder digest, text), keyed by their sha256, so a changed
encoder never serves an old vector. SQLite's locking makes it safe for checks running at the same
time (WAL, a busy timeout); it keeps the ``LIMIT`` most recently used vectors (about 60 MB). A
cache that cannot be opened or written only costs speed: it is logged and left alone.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

LIMIT = 40_000  # vectors kept (384 float32 each: 1.5 kB)
FILE_NAME = "suggest-vectors.sqlite"


class VectorCache:
    """Vectors of texts under one encoder (``digest``); every method is a no-op once it failed."""

    def __init__(self, folder: Path, digest: str, limit: int = LIMIT):
        self.path, self.digest, self.limit = folder / FILE_NAME, digest, limit
        self._db: sqlite3.Connection | None = None
        self._failed = False

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of ``texts`` (those found), marked as just used."""
        keys = {self._key(text): text for text in texts}
        found: dict[str, np.ndarray] = {}

        def read(db: sqlite3.Connection) -> None:
            ordered = list(keys)
            for start in range(0, len(ordered), 500):  # SQLite's limit on query parameters
                chunk = ordered[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk).fetchall()
                found.update((keys[key], np.frombuffer(blob, np.float32)) for key, blob in rows)
                db.executemany("UPDATE vectors SET used = ? WHERE key = ?",
                               [(time.time(), key) for key, _ in rows])

        self._run(read)
        return found

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep ``vectors``; then drop the least recently used beyond the limit."""
        def write(db: sqlite3.Connection) -> None:
            now = time.time()
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                           [(self._key(text), np.asarray(v, np.float32).tobytes(), now)
                            for text, v in vectors.items()])
            db.execute("DELETE FROM vectors WHERE key IN (SELECT key FROM vectors ORDER BY used DESC "
                       "LIMIT -1 OFFSET ?)", (self.limit,))

        if vectors:
            self._run(write)

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(f"{self.digest}\0{text}".encode()).digest()

    def _run(self, work) -> None:
        if self._failed:
            return
        try:
            db = self._connect()
            with db:  # one transaction
                work(db)
        except (sqlite3.Error, OSError) as exc:
            self._failed = True
            log.warning("vector cache %s not used (%s): suggestions are computed without it", self.path, exc)

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL, "
                       "used REAL NOT NULL)")
            db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)")
            self._db = db
        return self._db
