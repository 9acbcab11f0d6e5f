"""The reader interface: shards of raw input, and the bad records a reader quarantines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

RAW_CHARS = 500  # how much of an offending input a BadRecord keeps

# Reasons that end a shard: nothing after them can be read.
FATAL_REASONS = frozenset({"truncated_gzip", "corrupt_gzip", "corrupt_tar"})
MEMBER_PREFIX = "member "  # BadRecord.location of one member of an archive


@dataclass(frozen=True)
class Shard:
    """One unit of parallel work: the files one reader reads together."""

    reader: str  # "unarxive" | "s2orc_json" | "s2orc_legacy" | "s2_api" | "jats" | "tei" | "arxiv_latex"
    name: str  # stable, unique per reader, filesystem-safe (used for output file names)
    paths: tuple[str, ...]
    release: str  # source release (e.g. "20200705", "2023-sample", an S2 release id)
    metadata: str | None = None  # one metadata file used for filtering/fields, when separate
    collection: str | None = None  # the collection its papers are recorded under (None: the reader's name)


@dataclass(frozen=True)
class BadRecord:
    """A record that could not be read; it goes to quarantine, never silently dropped."""

    shard: str
    location: str  # "line 17", "file x.json", or "byte 123456" where a truncated gzip stopped
    reason: str  # short code: malformed_json, missing_key:<k>, span_out_of_range, ...
    detail: str
    raw: str  # the first RAW_CHARS characters of the offending input

    @property
    def fatal(self) -> bool:
        # A broken member of an archive (one paper of an arXiv bulk tar) ends only that record.
        return self.reason in FATAL_REASONS and not self.location.startswith(MEMBER_PREFIX)


class RecordError(ValueError):
    """Raised while converting one record; the reader turns it into a BadRecord and goes on."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


T = TypeVar("T")


def guarded(shard: Shard, location: str, raw: str | bytes, convert: Callable[..., T], *args) -> T | BadRecord:
    """``convert(*args)``, or the BadRecord that quarantines the record it reads: with the RecordError's
    reason, or ``unreadable:<ExceptionType>`` for any other exception -- one record never stops a
    shard, whatever it holds."""
    try:
        return convert(*args)
    except RecordError as error:
        return bad_record(shard, location, error, raw)
    except Exception as exc:  # the point: quarantine the record, with what went wrong
        error = RecordError(f"unreadable:{type(exc).__name__}", str(exc)[:RAW_CHARS] or repr(exc))
        return bad_record(shard, location, error, raw)


def bad_record(shard: Shard, location: str, error: RecordError, raw: str | bytes) -> BadRecord:
    """A BadRecord for ``error``; ``raw`` is the offending input (a line without its newline)."""
    if isinstance(raw, bytes):
        raw = raw[: RAW_CHARS * 4].decode("utf-8", errors="replace")  # UTF-8 is at most 4 bytes a char
    return BadRecord(shard.name, location, error.reason, error.detail, raw.rstrip("\r\n")[:RAW_CHARS])


def __getattr__(name: str):
    """``InputSpec`` (a params model, in ``citeworth.sources.inputs``) where it has always been found,
    imported when asked for: reading a draft needs neither it nor pydantic."""
    if name == "InputSpec":
        from citeworth.sources.inputs import InputSpec

        return InputSpec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
