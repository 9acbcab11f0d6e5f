"""Mirrors: a folder or an http(s) URL laid out like ``../shared/data``, read instead of origin URLs.

The layout is ``github/OWNER/REPO/<path after the commit>``, the ``path`` of a registry row. A mirror
may keep a file gzipped as ``<path>.gz`` (the data mirror stores its bulk JATS sets so): where
``<path>`` is not there, ``<path>.gz`` is read and decompressed as it arrives, and the file that lands
is the public one, checked against the registry's sha256 and size of the public file. This holds for
every source read from a mirror, whatever it is, and for both kinds of mirror: a folder (a missing
file) and HTTP (a 404).

A ``.gz`` that is truncated, is no gzip, or decompresses to more or fewer bytes than the public file
has fails the download with an error naming it (``CorruptStoredFile``); its partial download is
deleted, the files already verified stay, and a rerun after the mirror is mended resumes.
"""

from __future__ import annotations

import contextlib
import os
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import requests

from citeworth.core.errors import StageFailed
from citeworth.download.params import DownloadParams
from citeworth.download.remote import Body, CorruptStoredFile, RemoteFile

MIRROR_ENV = "CITEWORTH_MIRROR"
GZ = ".gz"
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # a gzip header and trailer around a deflate stream


def configured_mirror(params: DownloadParams) -> str | None:
    """``params.mirror``, else ``$CITEWORTH_MIRROR``; an empty value means: use the origin URLs."""
    return params.mirror or os.environ.get(MIRROR_ENV) or None


def from_mirror(files: list[RemoteFile], mirror: str, source: str) -> list[RemoteFile]:
    """The same files, read from ``mirror`` instead of their origin URLs (``source`` names them in
    errors). A folder must hold each file, plain or as ``.gz``; an HTTP mirror is asked as it goes."""
    if mirror.startswith(("http://", "https://")):
        base = mirror.rstrip("/")
        return [replace(f, url=f"{base}/{quote(f.path)}") for f in files]
    folder = Path(mirror)
    if not folder.is_dir():
        raise StageFailed(f"mirror folder {folder} does not exist (set {MIRROR_ENV}= to use the origin URLs)")
    missing = [f.path for f in files if not _in_folder(folder, f.path)]
    if missing:
        raise StageFailed(
            f"mirror {folder} lacks {len(missing)} {source} file(s), e.g. {missing[0]}; "
            f"set {MIRROR_ENV}= to fetch them from their origin URLs"
        )
    return [replace(f, url=str(folder / f.path)) for f in files]


def _in_folder(folder: Path, path: str) -> bool:
    return (folder / path).is_file() or (folder / (path + GZ)).is_file()


class GzipFallback:
    """A mirror's transport: ``inner`` reads ``url``; where there is no such file, ``url + ".gz"``,
    decompressed. A resumed transfer reads the ``.gz`` from its start and skips what the part holds
    (gzip cannot be entered mid-stream; mirrored files are small)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    @contextlib.contextmanager
    def open(self, file: RemoteFile, offset: int) -> Iterator[Body]:
        with contextlib.ExitStack() as stack:
            try:
                body = stack.enter_context(self.inner.open(file, offset))
            except (FileNotFoundError, requests.HTTPError) as exc:
                if not _not_found(exc):
                    raise
                stored = replace(file, url=file.url + GZ, size=None, sha256=None, md5=None)
                body = gunzipped(stack.enter_context(self.inner.open(stored, 0)), offset, file)
            yield body


def _not_found(exc: Exception) -> bool:
    if isinstance(exc, FileNotFoundError):
        return True
    return exc.response is not None and exc.response.status_code == 404


def gunzipped(stored: Body, offset: int, file: RemoteFile) -> Body:
    """The decompressed bytes of the ``.gz`` body ``stored`` from ``offset`` on."""
    return Body(offset, file.size, _inflate(stored.chunks, offset, file))


def _inflate(chunks: Iterator[bytes], skip: int, file: RemoteFile) -> Iterator[bytes]:
    inflater = zlib.decompressobj(_GZIP_WBITS)
    produced = 0
    for chunk in chunks:
        try:
            data = inflater.decompress(chunk)
        except zlib.error as exc:
            raise CorruptStoredFile(f"{file.path}{GZ} in the mirror is not a valid gzip file ({exc})") \
                from None
        produced += len(data)
        if file.size is not None and produced > file.size:
            raise CorruptStoredFile(f"{file.path}{GZ} in the mirror decompresses to more than the "
                                    f"{file.size} bytes of the public file")
        if produced > skip:
            yield data[max(0, len(data) - (produced - skip)):]
        if inflater.eof:
            break
    if not inflater.eof:
        raise CorruptStoredFile(f"{file.path}{GZ} in the mirror is truncated: its gzip stream ends after "
                                f"{produced} bytes of the file")
    if file.size is not None and produced != file.size:
        raise CorruptStoredFile(f"{file.path}{GZ} in the mirror decompresses to {produced} bytes, "
                                f"not the {file.size} bytes of the public file")
