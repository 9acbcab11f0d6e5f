"""Which shard store (``citeworth.curate.shard_store``) a curation uses, and how big it may grow:
read from the environment, never from the params.

``configured_store`` picks the store from ``$CITEWORTH_SHARD_STORE``:

- unset: a folder where every workspace of a run (``citeworth.orchestration.runs``: git worktrees of
  one repository) finds it, beside the release claims: ``<git common dir>/citeworth/shards``
  (outside a git checkout, no store);
- a path: that folder; ``off``: no store;
- ``s3://bucket/prefix``: objects ``<prefix>/<fingerprint>/<file>`` (``citeworth.curate.s3_shard_store``),
  for hosts that share nothing else.

``$CITEWORTH_SHARD_STORE_LIMIT`` (``500MB``, ``20GB``, ``1.5GiB``; default ``20GB``) caps the store's
size (least recently used entries are evicted, see ``shard_store``).

Neither the location nor the limit is a param: where finished work is kept changes no output, so it
must not invalidate the stage. A value that cannot be used (a limit that is not a size, an S3 URL
without a bucket) is an ``InvalidSetting`` naming the variable (``citeworth`` exits 2 with it).

This module imports both backends (the S3 one only when the variable names S3, so a folder store
never loads boto3); neither imports it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from citeworth.core.errors import InvalidSetting
from citeworth.curate.shard_store import LocalShardStore

if TYPE_CHECKING:
    from citeworth.curate.s3_shard_store import S3ShardStore

STORE_ENV = "CITEWORTH_SHARD_STORE"
LIMIT_ENV = "CITEWORTH_SHARD_STORE_LIMIT"
# A kept paper's curated output is some 25 kB (the mirrored JATS articles: 174 kB for 7 kept papers),
# so 20 GB holds the curated shards of ~800,000 kept papers -- a whole release of a large corpus, which
# the next release mostly reuses -- and is small against a workstation's disk or a bucket's bill; a
# folder store takes little disk of its own anyway while the outputs it links to exist.
DEFAULT_LIMIT = "20GB"
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([a-z]*)\s*", re.IGNORECASE)


def configured_store(start: Path | None = None) -> LocalShardStore | S3ShardStore | None:
    """The store ``$CITEWORTH_SHARD_STORE`` names (module docstring), bounded by
    ``$CITEWORTH_SHARD_STORE_LIMIT``; None for ``off`` or, with no variable, outside a git checkout
    (``start``: the working directory)."""
    configured = os.environ.get(STORE_ENV)
    if configured == "off":
        return None
    limit = store_limit()
    if configured and configured.startswith("s3://"):
        return _s3_store(configured, limit)
    if configured:
        return LocalShardStore(Path(configured), limit)
    common = git_common_dir(Path(start or Path.cwd()))
    return LocalShardStore(common / "citeworth" / "shards", limit) if common else None


def _s3_store(url: str, limit: int) -> S3ShardStore:
    from citeworth.curate.s3_shard_store import S3ShardStore, bucket_and_prefix

    try:
        bucket_and_prefix(url)
    except ValueError as exc:
        raise InvalidSetting(f"{STORE_ENV}: {exc}; or name a folder, or off") from None
    return S3ShardStore(url, limit)


def store_limit() -> int:
    """``$CITEWORTH_SHARD_STORE_LIMIT`` in bytes (``DEFAULT_LIMIT`` when unset); InvalidSetting
    naming the variable when it is not a positive size."""
    text = os.environ.get(LIMIT_ENV) or DEFAULT_LIMIT
    try:
        return parse_size(text)
    except ValueError as exc:
        raise InvalidSetting(f"{LIMIT_ENV}: {exc}; {STORE_ENV}=off turns the store off") from None


def parse_size(text: str) -> int:
    """``"20GB"``, ``"500 MB"``, ``"1.5GiB"``, ``"4096"`` -> bytes (kB, MB, GB, TB are powers of
    1000; KiB, MiB, GiB, TiB powers of 1024); ValueError for anything else or less than a byte."""
    match = _SIZE.fullmatch(text)
    unit = _UNITS.get(match[2].lower()) if match else None
    size = round(float(match[1]) * unit) if unit else 0
    if size < 1:
        raise ValueError(f"{text!r} is not a size: give a positive number of bytes, optionally with a unit "
                         "(500MB, 20GB, 1.5GiB)")
    return size


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
