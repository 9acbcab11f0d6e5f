"""Atomic, deterministic file output shared by every stage.

Outputs are written to a temporary sibling and renamed into place, so a crash never leaves a
half-written artifact, and JSON is always dumped with sorted keys so two runs are byte-identical.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# Every digit as "0", every other byte as a space: 19 digits in a row (a number orjson would not
# read as the standard library does) are then one bytes search, far faster than a regex.
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_NINETEEN_DIGITS = b"0" * 19


def dumps(obj: Any) -> str:
    """Canonical one-line JSON: sorted keys, real UTF-8, no trailing spaces."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class JsonInputError(ValueError):
    """Input that is not one well-formed JSON value; ``reason`` is a short code for quarantine:
    invalid_utf8, malformed_json, too_deeply_nested or invalid_unicode (an unpaired surrogate)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def parse_json(data: bytes | str) -> Any:
    """One JSON value as ``json.loads`` reads it; input it cannot take raises JsonInputError, also
    nesting deeper than the interpreter's stack (not RecursionError) and an escaped lone surrogate
    (``"\\ud800"``: a string no UTF-8 output file can hold).

    Bytes are read by orjson (twice as fast) where it gives what ``json.loads`` gives: orjson
    rejects, rather than reads differently, invalid UTF-8, lone surrogates, NaN and Infinity,
    floats out of range and nesting past 1,024, and all of those are left to the standard library;
    an integer beyond 64 bits it would read as a float, so text with 19 digits in a row is too."""
    if isinstance(data, bytes) and _NINETEEN_DIGITS not in data.translate(_DIGITS_AS_ZEROS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the standard library decides: it reads the value or names what is wrong
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise JsonInputError("invalid_utf8", str(exc)) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonInputError("malformed_json", str(exc)) from None
    except RecursionError:
        raise JsonInputError("too_deeply_nested", "nested deeper than the reader's stack") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            dumps(value).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JsonInputError("invalid_unicode", f"an escaped lone surrogate ({exc.reason})") from None
    return value


@contextlib.contextmanager
def atomic_write(path: Path, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes files private; artifacts are meant to be read by others
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: Path, obj: Any) -> None:
    with atomic_write(path) as handle:
        handle.write(json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, records: Iterable[Any]) -> int:
    count = 0
    with atomic_write(path) as handle:
        for record in records:
            handle.write(dumps(record) + "\n")
            count += 1
    return count


def write_text(path: Path, text: str) -> None:
    with atomic_write(path) as handle:
        handle.write(text)


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_jsonl(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def user_cache_dir() -> Path:
    """citeworth's folder in the user's cache: $XDG_CACHE_HOME/citeworth, else ~/.cache/citeworth."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "citeworth"
