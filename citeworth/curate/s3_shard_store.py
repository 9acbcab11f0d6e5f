"""The shard store on S3 (``CITEWORTH_SHARD_STORE=s3://bucket/prefix``): finished shards found by
hosts that share nothing but the bucket. Entries, limit and eviction rule are the folder store's
(``citeworth.curate.shard_store``); only where they live differs.

- An entry is the objects ``<prefix>/<fingerprint>/<file>`` of the folder store's files (``OUTPUTS``),
  ``stats.json`` uploaded last: ``find`` looks for it, so a killed upload is never found and the next
  ``add`` of that fingerprint uploads it whole.
- ``find`` downloads the entry into a scratch folder removed afterwards, so the stage reads local
  files; the entry is used then, and ``stats.json`` is copied onto itself to say so: its LastModified
  is the entry's used time, which one listing of the prefix returns with every object's size.
- Eviction (after an ``add``) and ``discard`` delete ``stats.json`` first, so a reader finds the entry
  whole or not at all. Objects of an entry without ``stats.json`` are an upload under way, or one a
  killed process left: removed once a day old.
- The client is boto3's, with its standard credential chain and endpoint (``AWS_ENDPOINT_URL_S3``,
  ``AWS_ENDPOINT_URL``, a profile's ``endpoint_url``): nothing of either is in the code. A network or
  permission error is logged and the shard curated afresh: a store only saves time.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import boto3
from boto3.exceptions import Boto3Error
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from citeworth.curate.shard_store import (
    OUTPUTS,
    STALE_SECONDS,
    STATS,
    Entry,
    ShardOutputs,
    least_recently_used,
)

log = logging.getLogger(__name__)

# What a store call may meet: the network, the service (denied, no such bucket) or the scratch disk.
STORE_ERRORS = (BotoCoreError, ClientError, Boto3Error, OSError)
# A store this process could not reach (no connection, no credentials) is skipped for this long, so
# that each shard does not pay botocore's retries again.
PAUSE_SECONDS = 300
_paused_until: dict[str, float] = {}  # "<endpoint> <bucket>" -> time.monotonic() of the next try


class S3ShardStore:
    def __init__(self, url: str, limit: int):
        bucket, prefix = bucket_and_prefix(url)
        self.bucket, self.limit = bucket, limit
        self.base = f"{prefix}/" if prefix else ""
        config = Config(retries={"mode": "standard"}, connect_timeout=10, read_timeout=60)
        self.client = _session().client("s3", config=config)
        self.endpoint = f"{self.client.meta.endpoint_url} {bucket}"

    def where(self, fingerprint: str) -> str:
        return f"s3://{self.bucket}/{self.base}{fingerprint}"

    def _key(self, fingerprint: str, name: str) -> str:
        return f"{self.base}{fingerprint}/{name}"

    @contextlib.contextmanager
    def find(self, fingerprint: str) -> Iterator[ShardOutputs | None]:
        """The entry downloaded into a scratch folder removed afterwards; None when there is no
        whole entry or the store cannot be read."""
        if self._paused():
            yield None
            return
        scratch = Path(tempfile.mkdtemp(prefix=f"citeworth-shard-{fingerprint}."))
        try:
            yield self._download(fingerprint, ShardOutputs.in_folder(scratch))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _download(self, fingerprint: str, found: ShardOutputs) -> ShardOutputs | None:
        targets = dict(zip(OUTPUTS, found.files(), strict=True))
        try:  # stats.json first: what marks a whole entry
            for name in (STATS, *(name for name in OUTPUTS if name != STATS)):
                self.client.download_file(self.bucket, self._key(fingerprint, name), str(targets[name]))
        except STORE_ERRORS as exc:
            if not _missing(exc):
                self._failed(f"shard {fingerprint} not read from {self.where(fingerprint)}", exc)
            return None  # no entry, a partial one, or one evicted while it was read
        self._mark_used(fingerprint)
        return found

    def _mark_used(self, fingerprint: str) -> None:
        """Refresh stats.json's LastModified (a copy onto itself; S3 requires new metadata for that)."""
        key = self._key(fingerprint, STATS)
        try:
            self.client.copy_object(Bucket=self.bucket, Key=key,
                                    CopySource={"Bucket": self.bucket, "Key": key},
                                    MetadataDirective="REPLACE", Metadata={"used": str(time.time())})
        except STORE_ERRORS as exc:  # evicted since it was read: the files are here all the same
            log.info("shard %s: its use not recorded in %s: %s", fingerprint, self.where(fingerprint), exc)

    def add(self, fingerprint: str, outputs: ShardOutputs) -> None:
        """Upload a finished shard's outputs under its fingerprint, stats.json last (an entry
        already there stays: equal anyway), then evict the least recently used entries until the
        store fits its limit."""
        if self._paused():
            return
        try:
            if self._exists(fingerprint):
                return
            for name, path in zip(OUTPUTS, outputs.files(), strict=True):
                self.client.upload_file(str(path), self.bucket, self._key(fingerprint, name))
        except STORE_ERRORS as exc:
            self._failed(f"shard {fingerprint} not stored in {self.where(fingerprint)}", exc)
            return
        self._evict(keep=fingerprint)

    def _exists(self, fingerprint: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(fingerprint, STATS))
        except ClientError as exc:
            if _missing(exc):
                return False
            raise
        return True

    def discard(self, fingerprint: str) -> None:
        """Remove a damaged entry (stats.json first, so no reader finds it half removed)."""
        try:
            self._remove(fingerprint)
        except STORE_ERRORS as exc:
            self._failed(f"shard {fingerprint} not removed from {self.where(fingerprint)}", exc)

    def entries(self) -> tuple[list[Entry], list[str]]:
        """The whole entries (size, used time), and the fingerprints of partial ones a day old."""
        sizes: dict[str, int] = defaultdict(int)
        newest: dict[str, float] = defaultdict(float)
        used: dict[str, float] = {}
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.base)
        for page in pages:
            for item in page.get("Contents", []):
                fingerprint, _, name = item["Key"][len(self.base):].partition("/")
                if name not in OUTPUTS:
                    continue  # not an entry's object
                modified = item["LastModified"].timestamp()
                sizes[fingerprint] += item["Size"]
                newest[fingerprint] = max(newest[fingerprint], modified)
                if name == STATS:
                    used[fingerprint] = modified
        whole = [Entry(fingerprint, sizes[fingerprint], used[fingerprint]) for fingerprint in used]
        stale = [fingerprint for fingerprint in sizes
                 if fingerprint not in used and newest[fingerprint] < time.time() - STALE_SECONDS]
        return whole, stale

    def _evict(self, keep: str) -> None:
        try:
            whole, stale = self.entries()
            for entry in least_recently_used(whole, self.limit, keep):
                self._remove(entry.fingerprint)
                log.info("shard store %s is over its limit of %d bytes: evicted %s (%d bytes, the least "
                         "recently used)", self.where(""), self.limit, entry.fingerprint, entry.size)
            for fingerprint in stale:
                self._remove(fingerprint)
        except STORE_ERRORS as exc:
            self._failed(f"shard store {self.where('')}: eviction stopped", exc)

    def _paused(self) -> bool:
        return time.monotonic() < _paused_until.get(self.endpoint, 0)

    def _failed(self, what: str, exc: Exception) -> None:
        if isinstance(exc, BotoCoreError):  # not reached at all: pause, rather than retry each shard
            _paused_until[self.endpoint] = time.monotonic() + PAUSE_SECONDS
            log.warning("%s: %s; this process uses no shard store for %d s", what, exc, PAUSE_SECONDS)
        else:
            log.warning("%s: %s", what, exc)

    def _remove(self, fingerprint: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(fingerprint, STATS))
        others = [{"Key": self._key(fingerprint, name)} for name in OUTPUTS if name != STATS]
        self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": others, "Quiet": True})


def bucket_and_prefix(url: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix/`` -> ``("bucket", "some/prefix")``; ValueError naming the URL when
    it names no bucket."""
    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    if not bucket:
        raise ValueError(f"{url!r} names no bucket: give s3://bucket/prefix")
    return bucket, prefix.strip("/")


@functools.cache
def _session() -> boto3.session.Session:
    """One session per process: a store is made per shard, and a client of a session that has loaded
    S3's service model costs milliseconds (a new session's first, a tenth of a second)."""
    return boto3.session.Session()


def _missing(exc: Exception) -> bool:
    """Whether ``exc`` says the object is not there (HEAD answers a bare 404, GET NoSuchKey)."""
    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey")
