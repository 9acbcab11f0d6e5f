"""Stream JSON records out of (possibly gzipped) files, turning every fault into a BadRecord.

Lines are read as bytes and decoded one at a time, so one line of invalid UTF-8 costs one record,
not the shard. A gzip stream that ends early or fails its checks ends the shard with one fatal
BadRecord naming the decompressed byte offset reached (the end of the last whole line).

Gzip is inflated by ISA-L (``isal``, 2.7x the standard library's speed on a shard) while the stream is
sound. Where ISA-L finds a break, the standard library's ``gzip`` reads the file again from past the
lines already given, so the break is reported where and as ``gzip`` reports it: ISA-L stops at the
same fault, in its own words, and may give fewer lines before it (tests hold the two to this).
"""

from __future__ import annotations

import gzip
import itertools
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from isal import igzip, isal_zlib

from citeworth.core.io import JsonInputError, parse_json
from citeworth.core.paper import Paper
from citeworth.sources.base import BadRecord, RecordError, Shard, bad_record, guarded

GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based
    offset: int  # decompressed byte offset of the line's first byte
    data: bytes


class BrokenStream(Exception):
    """The byte stream itself failed (truncated or corrupt gzip): nothing more can be read."""

    def __init__(self, reason: str, offset: int, line: int, detail: str):
        super().__init__(detail)
        self.reason, self.offset, self.line, self.detail = reason, offset, line, detail


def is_gzip(path: str | Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def open_bytes(path: str | Path, inflate: Callable[..., IO[bytes]] = igzip.open) -> IO[bytes]:
    """Open a file for binary reading, decompressing it when it is gzip (by content, not name)."""
    return inflate(path, "rb") if is_gzip(path) else open(path, "rb")


def iter_lines(path: str | Path) -> Iterator[Line]:
    """Non-blank lines of ``path`` with their numbers and offsets; raises BrokenStream at a break
    (also for an empty ``.gz`` file, which is a download cut off at byte 0, not an empty shard)."""
    if str(path).endswith(".gz") and Path(path).stat().st_size == 0:
        raise BrokenStream("truncated_gzip", 0, 0, "an empty file is no gzip stream (20 bytes at least)")
    given = 0
    try:
        for line in _lines(path, igzip.open):
            yield line
            given += 1
    except BrokenStream:  # the standard library names the break (see the module docstring)
        yield from itertools.islice(_lines(path, gzip.open), given, None)


def _lines(path: str | Path, inflate: Callable[..., IO[bytes]]) -> Iterator[Line]:
    number = offset = 0
    try:
        with open_bytes(path, inflate) as handle:
            for data in handle:
                number += 1
                if data.strip():
                    yield Line(number, offset, data)
                offset += len(data)
    except EOFError as exc:
        raise BrokenStream("truncated_gzip", offset, number, f"{exc} after line {number}") from exc
    except (zlib.error, isal_zlib.error, gzip.BadGzipFile) as exc:
        raise BrokenStream("corrupt_gzip", offset, number, f"{exc} after line {number}") from exc


def decode_json(data: bytes | str, what: str) -> dict:
    """One JSON object, or a RecordError with a JsonInputError reason (see citeworth.core.io)."""
    value = decode_json_value(data, what)
    if not isinstance(value, dict):
        raise RecordError("malformed_json", f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


def decode_json_value(data: bytes | str, what: str) -> Any:
    try:
        return parse_json(data)
    except JsonInputError as exc:
        raise RecordError(exc.reason, f"{what}: {exc.detail}") from None


def iter_json_lines(
    path: str | Path, shard: Shard, label: str = ""
) -> Iterator[tuple[Line, dict] | BadRecord]:
    """``(line, object)`` per JSON line of ``path``, or a BadRecord for a line that is not one.

    A broken stream yields one fatal BadRecord and ends the iteration. ``label`` prefixes the
    location (e.g. the metadata file's name) when a shard reads more than one file.
    """
    prefix = f"{label} " if label else ""
    try:
        for line in iter_lines(path):
            try:
                yield line, decode_json(line.data, f"line {line.number}")
            except RecordError as error:
                yield bad_record(shard, f"{prefix}line {line.number}", error, line.data)
    except BrokenStream as broken:
        size = Path(path).stat().st_size
        detail = f"{Path(path).name} ({size} bytes on disk): {broken.detail}"
        yield BadRecord(shard.name, f"{prefix}byte {broken.offset}", broken.reason, detail, "")


def iter_papers(shard: Shard, convert: Callable[[dict], Paper]) -> Iterator[Paper | BadRecord]:
    """``convert`` applied to every JSON line of the shard's files; a line that is not JSON, or
    that ``convert`` fails on, becomes a BadRecord and reading goes on."""
    for path in shard.paths:
        for item in iter_json_lines(path, shard):
            if isinstance(item, BadRecord):
                yield item
                continue
            line, record = item
            yield guarded(shard, f"line {line.number}", line.data, convert, record)
