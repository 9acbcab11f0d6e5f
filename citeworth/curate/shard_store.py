"""Curated shards by fingerprint, so that a new release reuses every shard an older one curated.

A shard's fingerprint (``citeworth.curate.stage``) covers what decides its curated output -- the
reader, the bytes of its files and their names within the shard's folder, its metadata file, the
rules and the code -- and not where the files lie, the release or the shard's name. Those three
are provenance the output only carries: the paragraphs' ``release`` and ``shard`` fields, the
quarantine records' ``shard``, the stats' ``shard``, ``release`` and ``inputs`` (the papers file
carries none). A finished shard whose fingerprint is found here is written out for its new shard by
rewriting exactly those fields, which gives the bytes a fresh curation writes (the unit tests
compare them).

An entry is ``paragraphs.jsonl``, ``papers.jsonl``, ``quarantine.jsonl`` and ``stats.json`` under
the fingerprint. This module holds what every store shares and the folder store, ``LocalShardStore``;
``citeworth.curate.s3_shard_store`` keeps the same entries on S3, and
``citeworth.curate.store_settings`` picks one of the two (and its limit) from the environment. The
dependency runs one way: the settings import the stores, the S3 store imports this module.

A folder entry holds hard links to the curated files where the file system allows (no disk while the
outputs, or DVC's cache of them, hold the same files), copies otherwise. It appears whole (made
under a temporary name, then renamed) and is never changed; an S3 entry uploads ``stats.json`` last,
and ``find`` looks for that file, so a killed upload is never found. ``find`` (a context manager)
gives the entry's files in a scratch folder removed on exit (hard links, or the downloaded objects),
and an entry evicted or discarded is moved aside first (S3: its ``stats.json`` deleted first), so a
reader has the whole entry or none of it, however evictions interleave.

Bounded: a store has a limit in bytes. After each ``add`` the least recently used entries (used:
made by ``add`` or returned by ``find``) are removed until the store fits; the entry just added
never is, even when it alone exceeds the limit. An entry's size is its files' sizes, each inode
counted once: a file hard-linked from the outputs counts in full although evicting it frees no disk
while the outputs keep it, so the limit means what the store takes on its own, the same for a folder
and for S3. Temporaries a killed process left (a folder's ``.<fingerprint>.*.tmp``, an S3 entry
without ``stats.json``) are removed once a day old.

Deleting the store at any time costs only recomputation, and a store that fails (a full disk, S3
unreachable or forbidden) is logged and the shard curated afresh: a store only saves time, it never
fails a stage.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from citeworth.core.io import atomic_write, dumps, write_json

log = logging.getLogger(__name__)

OUTPUTS = ("paragraphs.jsonl", "papers.jsonl", "quarantine.jsonl", "stats.json")
STATS = OUTPUTS[-1]
# No find or add holds a temporary longer than copying four files takes: one a day old was left by
# a killed process.
STALE_SECONDS = 24 * 3600


class ShardOutputs:
    """Where one shard's output files are (in the order of ``OUTPUTS``)."""

    def __init__(self, paragraphs: Path, papers: Path, quarantine: Path, stats: Path):
        self.paragraphs, self.papers = Path(paragraphs), Path(papers)
        self.quarantine, self.stats = Path(quarantine), Path(stats)

    @classmethod
    def in_folder(cls, folder: Path) -> ShardOutputs:
        return cls(*(Path(folder) / name for name in OUTPUTS))

    def files(self) -> tuple[Path, Path, Path, Path]:
        return self.paragraphs, self.papers, self.quarantine, self.stats


class Entry(NamedTuple):
    """A stored shard as eviction sees it."""

    fingerprint: str
    size: int
    """bytes"""
    used: float
    """when ``add`` made it or ``find`` last returned it (seconds since the epoch)"""


def least_recently_used(entries: Iterable[Entry], limit: int, keep: str) -> list[Entry]:
    """The entries to evict, least recently used first, until the others fit within ``limit``
    bytes; never ``keep`` (the entry just added), even when it alone exceeds the limit."""
    ordered = sorted(entries, key=lambda entry: (entry.used, entry.fingerprint))
    excess = sum(entry.size for entry in ordered) - limit
    evicted = []
    for entry in ordered:
        if excess <= 0:
            break
        if entry.fingerprint != keep:
            evicted.append(entry)
            excess -= entry.size
    return evicted


class LocalShardStore:
    """Entries as folders under ``root``. An entry's used time is its folder's mtime, set by ``add``
    and ``find`` (the folder's, not its files': they are hard links to outputs whose times DVC reads)."""

    def __init__(self, root: Path, limit: int):
        self.root, self.limit = Path(root), limit

    def where(self, fingerprint: str) -> str:
        return str(self.root / fingerprint)

    @contextlib.contextmanager
    def find(self, fingerprint: str) -> Iterator[ShardOutputs | None]:
        """The entry's files, hard-linked into a scratch folder removed afterwards (an eviction
        meanwhile removes the store's links, not these); None when there is no whole entry."""
        scratch = None
        try:
            scratch = self._linked_copy(fingerprint)
        except OSError as exc:  # moved aside (evicted, discarded) while linked, or an unreadable store
            log.info("shard %s not read from %s: %s", fingerprint, self.root, exc)
        try:
            yield ShardOutputs.in_folder(scratch) if scratch else None
        finally:
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)

    def _linked_copy(self, fingerprint: str) -> Path | None:
        entry = self.root / fingerprint
        if not (entry / STATS).is_file():
            return None
        scratch = self._temporary(fingerprint)
        try:
            for name in OUTPUTS:
                _link_or_copy(entry / name, scratch / name)
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        with contextlib.suppress(FileNotFoundError):  # moved aside after the links were made: read anyway
            _mark_used(entry)
        return scratch

    def add(self, fingerprint: str, outputs: ShardOutputs) -> None:
        """Keep a finished shard's outputs under its fingerprint (first come stays: equal anyway),
        then evict the least recently used entries until the store fits its limit."""
        entry = self.root / fingerprint
        if (entry / STATS).is_file():
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            scratch = self._temporary(fingerprint)
            try:
                for source, name in zip(outputs.files(), OUTPUTS, strict=True):
                    _link_or_copy(source, scratch / name)
                os.rename(scratch, entry)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            _mark_used(entry)
        except OSError as exc:  # a racing run stored it first, or the store is not writable
            log.info("shard %s not stored in %s: %s", fingerprint, self.root, exc)
            return
        self._evict(keep=fingerprint)

    def discard(self, fingerprint: str) -> None:
        """Remove a damaged entry (moved aside first, so no reader finds it half removed)."""
        try:
            self._remove(fingerprint)
        except OSError as exc:
            log.warning("shard %s not removed from %s: %s", fingerprint, self.root, exc)

    def entries(self) -> Iterator[Entry]:
        """Every whole entry, its size (each inode once) and used time."""
        for folder in self.root.iterdir():
            if folder.name.startswith("."):  # a temporary
                continue
            try:
                inodes = {(stat.st_dev, stat.st_ino): stat.st_size
                          for stat in ((folder / name).stat() for name in OUTPUTS)}
                yield Entry(folder.name, sum(inodes.values()), folder.stat().st_mtime)
            except FileNotFoundError:  # moved aside meanwhile, or not an entry
                continue

    def _evict(self, keep: str) -> None:
        try:
            for entry in least_recently_used(self.entries(), self.limit, keep):
                self._remove(entry.fingerprint)
                log.info("shard store %s is over its limit of %d bytes: evicted %s (%d bytes, the least "
                         "recently used)", self.root, self.limit, entry.fingerprint, entry.size)
            for temporary in self.root.glob(".*.tmp"):
                with contextlib.suppress(FileNotFoundError):  # its process is done with it
                    if temporary.stat().st_mtime < time.time() - STALE_SECONDS:
                        shutil.rmtree(temporary, ignore_errors=True)
        except OSError as exc:
            log.warning("shard store %s: eviction stopped: %s", self.root, exc)

    def _remove(self, fingerprint: str) -> None:
        aside = self._temporary(fingerprint)
        with contextlib.suppress(FileNotFoundError):  # gone already (another eviction or discard)
            os.rename(self.root / fingerprint, aside / fingerprint)
        shutil.rmtree(aside, ignore_errors=True)

    def _temporary(self, fingerprint: str) -> Path:
        return Path(tempfile.mkdtemp(dir=self.root, prefix=f".{fingerprint}.", suffix=".tmp"))


def _mark_used(folder: Path) -> None:
    """Set the folder's mtime to now, to the nanosecond (the file system's own clock may be a tick coarse)."""
    now = time.time_ns()
    os.utime(folder, ns=(now, now))


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copyfile(source, target)


def reuse(found: ShardOutputs, target: ShardOutputs, identity: dict) -> dict:
    """Write the finished shard ``found`` as ``target``, its provenance replaced by ``identity``
    (``shard`` key, ``name``, ``release``, ``inputs``); the new stats, written last."""
    stats = json.loads(found.stats.read_text(encoding="utf-8"))
    unchanged = [(found.papers, target.papers)]
    if (stats["shard"], stats["release"]) == (identity["shard"], identity["release"]):
        unchanged += [(found.paragraphs, target.paragraphs), (found.quarantine, target.quarantine)]
    else:
        stamp = {"release": identity["release"], "shard": identity["name"]}
        _restamp_lines(found.paragraphs, target.paragraphs, stamp)
        _restamp_lines(found.quarantine, target.quarantine, {"shard": identity["name"]})
    for source, copy in unchanged:
        with open(source, "rb") as lines, atomic_write(copy, "wb") as out:
            shutil.copyfileobj(lines, out)
    stats.update(shard=identity["shard"], release=identity["release"], inputs=identity["inputs"])
    write_json(target.stats, stats)
    return stats


def _restamp_lines(source: Path, target: Path, fields: dict) -> None:
    """Copy JSON lines from ``source`` to ``target`` with ``fields`` set in each record."""
    with open(source, encoding="utf-8") as lines, atomic_write(target) as out:
        for line in lines:
            record = json.loads(line)
            record.update(fields)
            out.write(dumps(record) + "\n")
