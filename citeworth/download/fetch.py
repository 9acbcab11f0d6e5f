"""Fetch a plan of remote files into a release folder: resumable, verified, bounded, with progress.

Each file is written to ``<name>.part``; a transfer cut mid-body is retried (tenacity, exponential
backoff with jitter) and resumes from the part's size with a range request. The digests are checked
before the rename; a mismatch deletes the partial file and fails. A file already present with the
expected (or previously recorded) checksum is not fetched again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import requests
import urllib3.exceptions
from botocore.exceptions import BotoCoreError, ClientError
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from citeworth.download.manifest import Entry, log_fetch
from citeworth.download.redaction import redact
from citeworth.download.remote import (
    Body,
    ChecksumMismatch,
    CorruptStoredFile,
    Digests,
    DownloadError,
    RemoteFile,
    TruncatedTransfer,
)
from citeworth.download.transports import Network

log = logging.getLogger(__name__)
# Errors a transport raises; converted to a DownloadError whose message has no secrets in it.
TRANSFER_ERRORS = (TruncatedTransfer, requests.RequestException, urllib3.exceptions.HTTPError,
                   BotoCoreError, ClientError, OSError)


class Transport(Protocol):
    def open(self, file: RemoteFile, offset: int): ...  # a context manager yielding a Body


class Cancelled(Exception):
    """Another file failed; stop this one early."""


@dataclass
class FetchResult:
    entries: list[Entry]
    fetched: int
    skipped: int
    bytes_fetched: int


class Fetcher:
    def __init__(
        self,
        release_dir: Path,
        transport_for: Callable[[str], Transport],
        net: Network,
        previous: dict[str, Entry],
        verify_existing: bool = True,
    ) -> None:
        self.release_dir = release_dir
        self.transport_for = transport_for
        self.net = net
        self.previous = previous
        self.verify_existing = verify_existing
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._bar: tqdm | None = None
        self._bytes = 0

    def fetch_all(self, files: list[RemoteFile], desc: str) -> FetchResult:
        """Fetch ``files`` with at most ``net.workers`` in flight; the first failure cancels the rest."""
        known = [f.size for f in files if f.size is not None]
        total = sum(known) if len(known) == len(files) else None
        bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, mininterval=0.5)
        with logging_redirect_tqdm(), bar as self._bar:
            with ThreadPoolExecutor(max_workers=max(1, self.net.workers)) as pool:
                futures = [pool.submit(self.fetch_one, f) for f in files]
                try:
                    wait(futures, return_when=FIRST_EXCEPTION)
                    failed = [f for f in futures if f.done() and f.exception()]
                    if failed:
                        raise failed[0].exception()
                except BaseException:  # a failure or Ctrl-C: stop the transfers in flight (their .part stays)
                    self.cancelled.set()
                    pool.shutdown(cancel_futures=True)
                    raise
        results = [f.result() for f in futures]
        fetched = sum(1 for _, was_fetched in results if was_fetched)
        return FetchResult([entry for entry, _ in results], fetched, len(files) - fetched, self._bytes)

    def fetch_one(self, file: RemoteFile) -> tuple[Entry, bool]:
        """The file's manifest entry, and whether it had to be fetched."""
        dest = self.release_dir / file.path
        existing = self._verified_existing(file, dest)
        if existing is not None:
            self._advance(existing.size)
            return existing, False
        try:
            digests = self._download(file, dest)
        except (DownloadError, Cancelled):
            raise
        except TRANSFER_ERRORS as exc:
            raise DownloadError(f"could not fetch {file.origin}: {redact(exc)}") from None
        log.debug("fetched %s (%d bytes)", file.origin, digests.size)
        entry = _entry(file, digests)
        log_fetch(self.release_dir, entry)
        return entry, True

    def _verified_existing(self, file: RemoteFile, dest: Path) -> Entry | None:
        """The entry of ``dest`` if it is already there with the right content, else None."""
        if not dest.exists():
            return None
        previous = self.previous.get(file.path)
        expected = replace(file, sha256=file.sha256 or (previous.sha256 if previous else None))
        if expected.sha256 is None and expected.md5 is None:
            return None  # nothing to check it against: fetch again
        if not self.verify_existing and previous and previous.sha256 == expected.sha256:
            if previous.size == dest.stat().st_size:
                return replace(previous, origin=file.origin)
        digests = Digests.of_file(dest)
        problem = digests.mismatch(expected)
        if problem:
            log.warning("%s is present but its %s; fetching it again", file.path, problem)
            return None
        return _entry(file, digests)

    def _download(self, file: RemoteFile, dest: Path) -> Digests:
        part = dest.with_name(dest.name + ".part")
        part.parent.mkdir(parents=True, exist_ok=True)
        progress = _FileProgress(self)
        retrying = Retrying(
            stop=stop_after_attempt(self.net.retries),
            wait=wait_exponential_jitter(multiplier=self.net.backoff, max=60, jitter=self.net.backoff),
            retry=retry_if_exception_type(TruncatedTransfer),
            before_sleep=lambda state: _log_retry(file, state),
            reraise=True,
        )
        try:
            digests = retrying(self._transfer, file, part, progress)
        except CorruptStoredFile as exc:
            part.unlink(missing_ok=True)  # its bytes came from a broken copy: none of them is kept
            raise CorruptStoredFile(f"{exc}; the partial download was deleted") from None
        problem = digests.mismatch(file)
        if problem:
            part.unlink()
            raise ChecksumMismatch(
                f"{file.origin}: {problem}; the partial download of {file.path} was deleted, "
                "run the stage again to refetch"
            )
        os.replace(part, dest)
        return digests

    def _transfer(self, file: RemoteFile, part: Path, progress: _FileProgress) -> Digests:
        """Append the rest of the file to ``part`` and return the digests of the whole of it."""
        offset = part.stat().st_size if part.exists() else 0
        if file.size is not None and offset > file.size:
            offset = 0  # a stale part from another version of the file
        digests = Digests.of_file(part) if offset else Digests()
        progress.at(offset)
        if file.size is not None and offset == file.size:
            return digests
        with self.transport_for(file.url).open(file, offset) as body:
            if body.start != offset:  # the server ignored the range: start over
                digests, offset = Digests(), 0
            with open(part, "r+b" if offset else "wb") as out:
                out.truncate(offset)
                out.seek(offset)
                for chunk in self._guarded(body):
                    out.write(chunk)
                    digests.update(chunk)
                    self._count_fetched(len(chunk))
                    progress.at(digests.size)
        expected = file.size if file.size is not None else body.total
        if expected is not None and digests.size != expected:
            if digests.size > expected:
                part.unlink()
            raise TruncatedTransfer(f"got {digests.size} of {expected} bytes")
        return digests

    def _guarded(self, body: Body) -> Iterator[bytes]:
        """The body's chunks; a connection lost mid-body becomes a (retried) TruncatedTransfer."""
        chunks = iter(body.chunks)
        while True:
            if self.cancelled.is_set():
                raise Cancelled
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            except (requests.RequestException, urllib3.exceptions.HTTPError, BotoCoreError, OSError) as exc:
                raise TruncatedTransfer(f"connection lost mid-file: {redact(exc)}") from None
            yield chunk

    def _advance(self, n: int) -> None:
        with self._lock:
            self._bar.update(n)

    def _count_fetched(self, n: int) -> None:
        with self._lock:
            self._bytes += n


class _FileProgress:
    """Moves the shared bar by how far one file's part has grown (or shrunk, on a restart)."""

    def __init__(self, fetcher: Fetcher) -> None:
        self.fetcher = fetcher
        self.position = 0

    def at(self, position: int) -> None:
        self.fetcher._advance(position - self.position)
        self.position = position


def _entry(file: RemoteFile, digests: Digests) -> Entry:
    return Entry(file=file.path, size=digests.size, sha256=digests.sha256.hexdigest(), origin=file.origin)


def _log_retry(file: RemoteFile, state: RetryCallState) -> None:
    log.warning("%s: %s; resuming (attempt %d)", file.origin,
                redact(state.outcome.exception()), state.attempt_number + 1)
