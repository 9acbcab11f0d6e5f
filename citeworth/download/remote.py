"""What a download plan is made of: remote files, response bodies and the errors of fetching."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from citeworth.core.errors import StageFailed

CHUNK = 1 << 20


@dataclass(frozen=True)
class RemoteFile:
    """One file to fetch into the release folder.

    ``url`` says where to read it (``http(s)://``, ``s3://`` or a local path); it may carry a
    presigned signature, so it is kept out of ``repr`` and never logged. ``origin`` is the public
    name recorded in the manifest. Expected ``size`` / ``sha256`` / ``md5`` are checked when known.
    """

    path: str
    origin: str
    url: str = field(repr=False, compare=False)
    size: int | None = None
    sha256: str | None = None
    md5: str | None = None

    def __post_init__(self) -> None:
        check_relative(self.path, self.origin)


@dataclass
class Body:
    """An open response: its bytes start at ``start``; ``total`` is the whole file's size if known."""

    start: int
    total: int | None
    chunks: Iterator[bytes]


class DownloadError(StageFailed):
    """A file could not be fetched; the message is already free of secrets."""


def check_relative(path: str, origin: str) -> None:
    """A remote name (S3 key, URL path, manifest entry) must stay inside the release folder."""
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or "\\" in path or ".." in parts:
        raise DownloadError(f"{origin} would be saved as {path!r}, outside the release folder")


class ChecksumMismatch(DownloadError):
    """The fetched bytes are not the expected ones; the partial file has been deleted."""


class CorruptStoredFile(DownloadError):
    """A mirror's stored copy (``<path>.gz``) does not give the file: truncated, no gzip, wrong size."""


class TruncatedTransfer(Exception):
    """The connection ended before the whole file arrived (transient: resume with a range request)."""


class Digests:
    """sha256 and md5 of a byte stream, fed chunk by chunk (md5 is what arXiv's manifest lists)."""

    def __init__(self) -> None:
        self.sha256 = hashlib.sha256()
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.size = 0

    def update(self, chunk: bytes) -> None:
        self.sha256.update(chunk)
        self.md5.update(chunk)
        self.size += len(chunk)

    @classmethod
    def of_file(cls, path: Path) -> Digests:
        digests = cls()
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digests.update(chunk)
        return digests

    def mismatch(self, expected: RemoteFile) -> str | None:
        """Why these digests are not those of ``expected`` (None when they match)."""
        checks = (
            ("size", expected.size, self.size),
            ("sha256", expected.sha256, self.sha256.hexdigest()),
            ("md5", expected.md5, self.md5.hexdigest()),
        )
        for name, want, got in checks:
            if want is not None and want != got:
                return f"{name} {got} does not match the expected {want}"
        return None


@dataclass(frozen=True)
class InlineFile:
    """A small file the plan already holds in memory (e.g. the manifest it selected files from)."""

    path: str
    origin: str
    content: bytes = field(repr=False)

    def __post_init__(self) -> None:
        check_relative(self.path, self.origin)


@dataclass
class Plan:
    """A source's resolved release, the files it holds, and how to read each URL scheme.

    ``transports`` maps ``http`` / ``s3`` / ``file`` to an object whose ``open(file, offset)`` is a
    context manager yielding a ``Body``.
    """

    release: str
    files: list[RemoteFile]
    transports: dict = field(default_factory=dict)
    inline: list[InlineFile] = field(default_factory=list)


def select(files: list[RemoteFile], patterns: list[str]) -> list[RemoteFile]:
    """The files whose path matches one of ``patterns`` (all files when there are none)."""
    if not patterns:
        return files
    chosen = [f for f in files if any(fnmatch.fnmatchcase(f.path, p) for p in patterns)]
    if not chosen:
        raise StageFailed(f"include={patterns} matches none of the {len(files)} files of the release")
    return chosen
