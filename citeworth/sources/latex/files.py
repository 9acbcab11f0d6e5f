"""The files of one paper's LaTeX source, read from whatever holds them, in memory.

A paper's source arrives as an arXiv e-print (a gzipped tar, or one gzipped ``.tex``), as a member of
an arXiv bulk tar (``arXiv_src_YYMM_NNN.tar``: members ``YYMM/<id>.gz`` or ``YYMM/<id>.pdf``), or as a
folder of unpacked files. Nothing is written to disk: members are decompressed into memory with
hard limits on sizes and file counts (a "zip bomb" fails as ``too_large``), and only regular files
with safe relative names are kept (no links, no absolute or ``..`` paths). Finder/Windows litter
(``._*`` AppleDouble files, ``__MACOSX/``) is dropped.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from citeworth.core.paper import arxiv_id_from_name
from citeworth.sources.base import RecordError

MAX_COMPRESSED_BYTES = 256 << 20  # one member or e-print as stored
MAX_SOURCE_BYTES = 512 << 20  # one paper's files, decompressed
MAX_FILES = 10_000  # one paper's files
TAR_BLOCK = 512


@dataclass(frozen=True)
class PaperSource:
    """One paper's source files (relative POSIX path -> bytes) and where they came from."""

    paper_id: str
    location: str  # "member 2212/2212.00001.gz", "file 2004.14974.gz", "folder scipy-1.0"
    files: dict[str, bytes]
    source_hash: str  # sha1 of the bytes as stored (unarXive's ``_source_hash``)
    source_name: str  # the stored name (unarXive's ``_source_name``)
    arxiv_id: str | None = None  # when the name is an arXiv identifier


@dataclass(frozen=True)
class SourceFailure:
    """A paper whose source cannot be read; the reader quarantines it with ``error.reason``."""

    location: str
    error: RecordError
    raw: bytes = b""


def iter_sources(paths: tuple[str, ...]) -> Iterator[PaperSource | SourceFailure]:
    """Every paper held by a shard's ``paths``: one stored file (a bulk tar: many papers; an e-print,
    a ``.tex`` or a PDF: one), or the files of one folder (one paper, rooted at their common folder)."""
    if len(paths) == 1 and Path(paths[0]).suffix.lower() in STORED_SUFFIXES:
        path = Path(paths[0])
        if path.suffix == ".tar" and not _is_gzip(path):
            yield from _bulk_tar(path)
        else:
            yield _stored_source(path.read_bytes(), path.name, f"file {path.name}")
        return
    yield folder_source(paper_root(paths), paths)


STORED_SUFFIXES = (".tar", ".gz", ".tgz", ".tex", ".pdf")


def paper_root(paths: tuple[str, ...]) -> Path:
    root = Path(os.path.commonpath([os.path.abspath(p) for p in paths]))
    return root.parent if root.is_file() else root


def folder_source(root: Path, paths: tuple[str, ...]) -> PaperSource | SourceFailure:
    """One paper from the files of a folder (relative names below ``root``)."""
    files: dict[str, bytes] = {}
    total = 0
    for file in sorted(Path(p) for p in paths):
        name = Path(os.path.abspath(file)).relative_to(root).as_posix()
        if _litter(name) or file.is_symlink():
            continue
        total += file.stat().st_size
        if total > MAX_SOURCE_BYTES or len(files) >= MAX_FILES:
            return SourceFailure(f"folder {root.name}", _too_large(root.name))
        files[name] = file.read_bytes()
    digest = hashlib.sha1()
    for name, data in files.items():
        digest.update(name.encode() + b"\0" + hashlib.sha1(data).digest())
    return PaperSource(
        folder_paper_id(root, files),
        f"folder {root.name}",
        files,
        digest.hexdigest(),
        root.name,
        arxiv_id_from_name(root.name),
    )


# Folder names that say nothing about the paper: its main file's name is used instead.
GENERIC_FOLDERS = frozenset({"tex", "latex", "src", "source", "sources", "paper", "manuscript", "doc"})


def folder_paper_id(folder: Path, files: dict[str, bytes]) -> str:
    """A folder's paper id: its name, or, for a generic name (``tex/``), the name of its one ``.tex``
    file with ``\\documentclass`` (minimap2's ``tex/minimap2.tex`` -> ``minimap2``)."""
    if folder.name.lower() not in GENERIC_FOLDERS:
        return folder.name
    mains = [
        PurePosixPath(name).stem
        for name, data in files.items()
        if name.endswith(".tex") and "/" not in name and b"\\documentclass" in data
    ]
    return mains[0] if len(mains) == 1 else folder.name


def _bulk_tar(path: Path) -> Iterator[PaperSource | SourceFailure]:
    """Members of an arXiv bulk tar, streamed one at a time."""
    try:
        with tarfile.open(path, mode="r|") as archive:
            for member in archive:
                if not member.isfile() or _litter(member.name):
                    continue
                location = f"member {member.name}"
                if member.size > MAX_COMPRESSED_BYTES:
                    yield SourceFailure(location, _too_large(member.name))
                    continue
                handle = archive.extractfile(member)
                yield _stored_source(handle.read(), member.name, location)
    except (tarfile.TarError, EOFError, OSError) as exc:
        yield SourceFailure(f"file {path.name}", RecordError("corrupt_tar", f"{path.name}: {exc}"))


def _stored_source(data: bytes, name: str, location: str) -> PaperSource | SourceFailure:
    """One stored paper (an e-print ``.gz``, a ``.tar(.gz)``, a ``.tex``, or a PDF)."""
    base = PurePosixPath(name).name
    arxiv_id = arxiv_id_from_name(base)
    paper_id = stored_paper_id(base)
    source_hash = hashlib.sha1(data).hexdigest()
    if data.startswith(b"%PDF") or base.lower().endswith(".pdf"):
        return SourceFailure(location, RecordError("pdf_only", f"{base}: a PDF without LaTeX source"), data)
    try:
        if data.startswith(b"\x1f\x8b"):
            data = _gunzip(data, base)
        if _is_tar(data):
            files = _tar_files(data, base)
        else:
            files = {f"{_stem(base)}.tex": data}
    except RecordError as error:
        return SourceFailure(location, error, data)
    return PaperSource(paper_id, location, files, source_hash, base, arxiv_id)


def _gunzip(data: bytes, name: str) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, MAX_SOURCE_BYTES + 1)
    except zlib.error as exc:
        raise RecordError("corrupt_gzip", f"{name}: {exc}") from None
    if len(out) > MAX_SOURCE_BYTES:
        raise _too_large(name)
    if not inflater.eof:
        raise RecordError("corrupt_gzip", f"{name}: the gzip stream ends early")
    return out


def _tar_files(data: bytes, name: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            for member in archive:
                if not member.isfile() or _litter(member.name) or not _safe_name(member.name):
                    continue
                total += member.size
                if total > MAX_SOURCE_BYTES or len(files) >= MAX_FILES:
                    raise _too_large(name)
                files[PurePosixPath(member.name).as_posix()] = archive.extractfile(member).read()
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise RecordError("corrupt_tar", f"{name}: {exc}") from None
    return files


def _is_tar(data: bytes) -> bool:
    return len(data) >= TAR_BLOCK and data[257:262] == b"ustar"


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _safe_name(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not name.startswith("/") and ".." not in parts


def _litter(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return any(part.startswith("._") or part == "__MACOSX" or part == ".DS_Store" for part in parts)


def stored_paper_id(name: str) -> str:
    """The paper id of a stored file or member: its arXiv id, else its name without suffixes."""
    return arxiv_id_from_name(name) or _stem(PurePosixPath(name).name)


def _stem(name: str) -> str:
    for suffix in (".gz", ".tgz", ".tar", ".tex"):
        name = name.removesuffix(suffix)
    return name


def _too_large(name: str) -> RecordError:
    return RecordError(
        "too_large", f"{name}: more than {MAX_SOURCE_BYTES >> 20} MiB or {MAX_FILES} files unpacked"
    )
