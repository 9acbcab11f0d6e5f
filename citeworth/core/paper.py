"""The one document model every source reader produces and curation consumes.

Offsets are Python string indices (code points) into ``Paragraph.text``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class CitationSpan:
    """A citation marker inside a paragraph: ``text == paragraph.text[start:end]``."""

    start: int
    end: int
    text: str
    ref_id: str | None = None


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: str
    section: str
    cite_spans: tuple[CitationSpan, ...] = ()
    # Non-citation references (figures, tables, formulas) as (start, end, kind).
    ref_spans: tuple[tuple[int, int, str], ...] = ()
    sec_number: str | None = None


@dataclass(frozen=True, slots=True)
class BibEntry:
    ref_id: str
    title: str | None = None
    year: int | None = None
    raw: str | None = None
    link: str | None = None


@dataclass(slots=True)
class Paper:
    paper_id: str
    title: str | None
    # Fields as the source names them (MAG fields, S2 fields of study, arXiv categories).
    fields_of_study: tuple[str, ...]
    paragraphs: list[Paragraph]
    bib_entries: dict[str, BibEntry] = field(default_factory=dict)
    source: str = ""
    release: str = ""
    shard: str = ""
    # Filtering facts (abstract present, inbound citations, venue ids, ...) as the source reports them.
    metadata: dict = field(default_factory=dict)
