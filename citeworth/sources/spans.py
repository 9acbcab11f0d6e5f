"""Checked paragraphs: every reader builds its ``Paragraph`` objects through ``make_paragraph``.

Offsets must lie inside the paragraph, name the surface text the source gives (a shifted span is
moved to the nearest occurrence of its text; one that cannot be found quarantines the record),
and no two spans (citations, figure/table/formula references) may overlap: curation removes and
labels text by these offsets, so a record with inconsistent spans is not trusted at all.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, NamedTuple

from citeworth.core.paper import CitationSpan, Paragraph
from citeworth.sources.base import RecordError

CITE = "cite"  # RawSpan.kind of a citation; any other kind is a reference (figure, table, formula...)


class RawSpan(NamedTuple):  # a tuple: readers make one per span of every paragraph
    start: int
    end: int
    kind: str
    text: str | None = None  # the source's surface text, when it gives one
    ref_id: str | None = None


def offset(value: Any, key: str, where: str) -> int:
    """An integer offset; digit strings are accepted (some dumps write offsets as strings)."""
    if type(value) is int:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise RecordError(f"bad_type:{key}", f"{where}: {key} is {value!r}, not an integer")


def raw_span(item: Any, kind: str, where: str) -> RawSpan:
    """A RawSpan from a source's ``{"start", "end", "text"?, "ref_id"?}`` object."""
    if not isinstance(item, dict):
        raise RecordError("bad_type:span", f"{where}: a span is {type(item).__name__}, not an object")
    if "start" not in item or "end" not in item:
        key = "start" if "start" not in item else "end"
        raise RecordError(f"missing_key:{key}", f"{where}: span {item!r} has no {key!r}")
    text, ref_id = item.get("text"), item.get("ref_id")
    return RawSpan(offset(item["start"], "start", where), offset(item["end"], "end", where), kind,
                   text if type(text) is str else None, None if ref_id is None else str(ref_id))


def make_paragraph(
    text: str, section: str, spans: Iterable[RawSpan], where: str, sec_number: str | None = None,
    headings: tuple[str, ...] = (),
) -> Paragraph:
    headings = headings if len(headings) > 1 else ()
    if not spans and isinstance(text, str):  # most paragraphs: nothing to check
        return Paragraph(text=text, section=section, sec_number=sec_number, headings=headings)
    placed = place(text, spans, where)
    for before, after in itertools.pairwise(placed):
        if after.start < before.end:
            raise RecordError("overlapping_spans", f"{where}: {_show(before)} overlaps {_show(after)}")
    cites = tuple(CitationSpan(s.start, s.end, text[s.start:s.end], s.ref_id)
                  for s in placed if s.kind == CITE)
    refs = tuple((s.start, s.end, s.kind) for s in placed if s.kind != CITE)
    return Paragraph(text=text, section=section, cite_spans=cites, ref_spans=refs, sec_number=sec_number,
                     headings=headings)


def place(text: str, spans: Iterable[RawSpan], where: str) -> list[RawSpan]:
    """Spans checked against ``text`` (shifted ones moved onto their text), sorted by offset."""
    if not isinstance(text, str):
        raise RecordError("bad_type:text", f"{where}: text is {type(text).__name__}, not a string")
    return sorted((_place(text, span, where) for span in spans), key=lambda s: (s.start, s.end))


def _place(text: str, span: RawSpan, where: str) -> RawSpan:
    if span.start == span.end:
        raise RecordError("empty_span", f"{where}: {_show(span)} is empty")
    if not 0 <= span.start < span.end <= len(text):
        raise RecordError("span_out_of_range", f"{where}: {_show(span)} outside text of length {len(text)}")
    if span.text is None or text[span.start:span.end] == span.text:
        return span
    start = _nearest(text, span.text, span.start)
    if start is None:
        found = text[span.start:span.end]
        raise RecordError("span_text_mismatch", f"{where}: {_show(span)} reads {found!r}, and "
                                                f"{span.text!r} is nowhere in the paragraph")
    return RawSpan(start, start + len(span.text), span.kind, span.text, span.ref_id)


def _nearest(text: str, needle: str, near: int) -> int | None:
    """Start of the occurrence of ``needle`` in ``text`` closest to ``near`` (earliest on a tie)."""
    best = None
    position = text.find(needle)
    while position != -1:
        if best is None or abs(position - near) < abs(best - near):
            best = position
        position = text.find(needle, position + 1)
    return best


def _show(span: RawSpan) -> str:
    label = f" {span.text!r}" if span.text is not None else ""
    return f"{span.kind} span [{span.start}, {span.end}){label}"
