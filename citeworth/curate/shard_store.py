"""Curated shards by fingerprint, so that a new release reuses every shard an older one curated.

A shard's fingerprint (``citeworth.curate.stage``) covers what decides its curated output -- the
reader, the bytes of its files and their names within the shard's folder, its metadata file, the
rules and the code -- and not where the files lie, the release or the shard's name. Those three
are provenance the output only carries: the paragraphs' ``release`` and ``shard`` fields, the
quarantine records' ``shard``, the stats' ``shard``, ``release`` and ``inputs``. A finished shard
whose fingerprint is found here is written out for its new shard by rewriting exactly those
fields, which gives the bytes a fresh curation writes (the unit tests compare them).

The store is one folder per fingerprint holding ``paragraphs.jsonl``, ``quarantine.jsonl`` and
``stats.json``, hard links to the curated files where the file system allows (no disk while the
outputs, or DVC's cache of them, hold the same files), copies otherwise. It lives where every
workspace of a run (``citeworth.orchestration.runs``: git worktrees of one repository) finds it,
beside the release claims: ``<git common dir>/citeworth/shards``; ``$CITEWORTH_SHARD_STORE`` names
another folder, or ``off`` disables it. It is not a param: where finished work is kept changes no
output, so it must not invalidate the stage. An entry appears whole (made under a temporary name,
then renamed) and is never changed; deleting the folder at any time costs only recomputation.
Outside a git checkout, with no variable, there is no store.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from citeworth.core.io import atomic_write, dumps, write_json

log = logging.getLogger(__name__)

STORE_ENV = "CITEWORTH_SHARD_STORE"
OUTPUTS = ("paragraphs.jsonl", "quarantine.jsonl", "stats.json")


class ShardOutputs:
    """Where one shard's three output files are."""

    def __init__(self, paragraphs: Path, quarantine: Path, stats: Path):
        self.paragraphs, self.quarantine, self.stats = Path(paragraphs), Path(quarantine), Path(stats)

    @classmethod
    def in_folder(cls, folder: Path) -> ShardOutputs:
        return cls(*(Path(folder) / name for name in OUTPUTS))

    def files(self) -> tuple[Path, Path, Path]:
        return self.paragraphs, self.quarantine, self.stats


def default_store(start: Path | None = None) -> Path | None:
    """``$CITEWORTH_SHARD_STORE`` (None for ``off``), else ``<git common dir>/citeworth/shards`` of
    the checkout holding ``start`` (the working directory), else None."""
    configured = os.environ.get(STORE_ENV)
    if configured:
        return None if configured == "off" else Path(configured)
    common = git_common_dir(Path(start or Path.cwd()))
    return common / "citeworth" / "shards" if common else None


def git_common_dir(start: Path) -> Path | None:
    """The git directory every worktree of ``start``'s repository shares (read from the files git
    writes, so no git process per shard); None outside a git checkout."""
    for folder in (start.resolve(), *start.resolve().parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # a worktree: "gitdir: <common dir>/worktrees/<name>"
            own = Path(dot_git.read_text().split("gitdir:", 1)[1].strip())
            own = own if own.is_absolute() else folder / own
            common = own / "commondir"
            return (own / common.read_text().strip()).resolve() if common.is_file() else own
    return None


class ShardStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def find(self, fingerprint: str) -> ShardOutputs | None:
        entry = ShardOutputs.in_folder(self.root / fingerprint)
        return entry if entry.stats.is_file() else None

    def add(self, fingerprint: str, outputs: ShardOutputs) -> None:
        """Keep a finished shard's outputs under its fingerprint (first come stays: equal anyway)."""
        if self.find(fingerprint):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{fingerprint}.", suffix=".tmp"))
        try:
            for source, kept in zip(outputs.files(), ShardOutputs.in_folder(scratch).files(), strict=True):
                _link_or_copy(source, kept)
            os.rename(scratch, self.root / fingerprint)
        except OSError as exc:  # a racing run stored it first, or the store is not writable
            log.info("shard %s not stored in %s: %s", fingerprint, self.root, exc)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def discard(self, fingerprint: str) -> None:
        """Remove a damaged entry (moved aside first, so no reader finds it half removed)."""
        aside = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{fingerprint}.", suffix=".tmp"))
        with contextlib.suppress(FileNotFoundError):  # gone already
            os.rename(self.root / fingerprint, aside / fingerprint)
        shutil.rmtree(aside, ignore_errors=True)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copyfile(source, target)


def reuse(found: ShardOutputs, target: ShardOutputs, identity: dict) -> dict:
    """Write the finished shard ``found`` as ``target``, its provenance replaced by ``identity``
    (``shard`` key, ``name``, ``release``, ``inputs``); the new stats, written last."""
    stats = json.loads(found.stats.read_text(encoding="utf-8"))
    if (stats["shard"], stats["release"]) == (identity["shard"], identity["release"]):
        for source, copy in ((found.paragraphs, target.paragraphs), (found.quarantine, target.quarantine)):
            with open(source, "rb") as unchanged, atomic_write(copy, "wb") as out:
                shutil.copyfileobj(unchanged, out)
    else:
        stamp = {"release": identity["release"], "shard": identity["name"]}
        _restamp_lines(found.paragraphs, target.paragraphs, stamp)
        _restamp_lines(found.quarantine, target.quarantine, {"shard": identity["name"]})
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
