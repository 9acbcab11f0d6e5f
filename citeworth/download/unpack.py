"""Unpack a downloaded tar archive safely into a folder beside it.

Only regular files and folders are extracted, each by our own code under the target folder:
absolute names, ``..``, symbolic and hard links, devices and FIFOs are rejected before anything is
written, and the total unpacked size is capped. The archive is unpacked into a temporary sibling and
renamed into place, so a crash never leaves a half-unpacked folder.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from citeworth.download.remote import CHUNK, Digests, DownloadError


class UnsafeArchive(DownloadError):
    """The archive holds a member that could write outside its folder, or is too large."""


def unpack_target(archive: Path, suffixes: list[str]) -> Path | None:
    """The folder ``archive`` unpacks into (its name minus the archive suffix), or None if not an archive."""
    for suffix in sorted(suffixes, key=len, reverse=True):
        if archive.name.endswith(suffix) and len(archive.name) > len(suffix):
            return archive.with_name(archive.name[: -len(suffix)])
    return None


def member_path(member: tarfile.TarInfo) -> PurePosixPath:
    """The member's relative path, or UnsafeArchive if extracting it could escape or is not plain data."""
    path = PurePosixPath(member.name)
    if path.is_absolute() or "\\" in member.name:
        raise UnsafeArchive(f"member {member.name!r} has an absolute path")
    if ".." in path.parts:
        raise UnsafeArchive(f"member {member.name!r} climbs out of the archive folder with '..'")
    if not (member.isreg() or member.isdir()):
        kind = "link" if member.issym() or member.islnk() else "device or special file"
        raise UnsafeArchive(f"member {member.name!r} is a {kind}; only files and folders are unpacked")
    return path


def unpack(archive: Path, target: Path, max_bytes: int) -> dict[str, Digests]:
    """Unpack ``archive`` into ``target``; returns each file's path relative to ``target`` with digests.

    When every member sits under one top folder named like ``target`` (``x.tar.gz`` holding ``x/``),
    that folder is the target itself rather than a folder inside it.
    """
    try:
        tar = tarfile.open(archive, "r:*")
    except tarfile.TarError as exc:
        raise DownloadError(f"{archive} is not a readable tar archive: {exc}") from None
    with tar:
        members = [(m, member_path(m)) for m in tar.getmembers()]
        _check_no_file_folder_clash(archive, members)
        total = sum(m.size for m, _ in members if m.isreg())
        if total > max_bytes:
            raise UnsafeArchive(f"{archive.name} would unpack to {total} bytes, over the cap of {max_bytes}")
        strip = _top_folder(members, target.name)
        tmp = target.with_name(f".{target.name}.unpack.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            files = _extract_all(tar, members, strip, tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return files


def _check_no_file_folder_clash(archive: Path, members: list[tuple[tarfile.TarInfo, PurePosixPath]]) -> None:
    """UnsafeArchive when one path is both a file and a folder (``a``, then ``a/`` or ``a/b``): the
    second member would fail half-way through unpacking, or, the other way round, write through it."""
    files = {path for member, path in members if member.isreg()}
    folders = {path for member, path in members if member.isdir()}
    folders |= {parent for _, path in members for parent in path.parents if parent.parts}
    if clash := sorted(files & folders):
        raise UnsafeArchive(f"{archive.name}: {clash[0].as_posix()!r} is both a file and a folder")


def _top_folder(members: list[tuple[tarfile.TarInfo, PurePosixPath]], name: str) -> int:
    """1 if all members live under a single top folder called ``name`` (strip it), else 0."""
    tops = {path.parts[0] for _, path in members if path.parts}
    nested = all(len(path.parts) > 1 or member.isdir() for member, path in members if path.parts)
    return 1 if tops == {name} and nested else 0


def _extract_all(tar: tarfile.TarFile, members: list[tuple[tarfile.TarInfo, PurePosixPath]], strip: int,
                 tmp: Path) -> dict[str, Digests]:
    files = {}
    for member, path in members:
        relative = PurePosixPath(*path.parts[strip:])
        if not relative.parts:
            continue
        if member.isdir():
            (tmp / relative).mkdir(parents=True, exist_ok=True)
        else:
            files[relative.as_posix()] = _extract_file(tar, member, tmp / relative)
    return files


def _extract_file(tar: tarfile.TarFile, member: tarfile.TarInfo, out: Path) -> Digests:
    out.parent.mkdir(parents=True, exist_ok=True)
    digests = Digests()
    source = tar.extractfile(member)
    with source, open(out, "wb") as sink:
        while chunk := source.read(CHUNK):
            sink.write(chunk)
            digests.update(chunk)
    return digests
