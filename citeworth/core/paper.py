"""The one document model every source reader produces and curation consumes.

Offsets are Python string indices (code points) into ``Paragraph.text``.

Identifiers (``Paper.ids``, ``BibEntry.ids``) use the keys of ``ID_KINDS`` with values normalised by
``normalise_id``, so that a bibliography entry of one paper can be matched to another paper of the
corpus (the related-work dataset's cited abstracts, the citation-linkage paper index).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Identifier kinds a Paper or BibEntry may carry: DOI, arXiv id, PubMed id, PMC id, Semantic Scholar
# corpus id, Microsoft Academic Graph id, ACL Anthology id. A reader sets only those its source
# states; it never guesses one.
ID_KINDS = ("doi", "arxiv", "pmid", "pmcid", "s2", "mag", "acl")
_ARXIV_VERSION = re.compile(r"v\d+$")
_ARXIV_NEW_NAME = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_ARXIV_OLD_NAME = re.compile(r"^([a-z\-]+(?:\.[A-Z]{2})?)(\d{7})(v\d+)?$")  # hep-th9901001 -> hep-th/9901001


def normalise_id(kind: str, value: str) -> str:
    """``value`` in the one spelling used for matching: DOIs lower-cased without resolver prefix,
    arXiv ids without ``arXiv:`` and version, PMC ids with their ``PMC`` prefix, the first of a
    list of MAG ids (S2ORC writes a paper's merged MAG records as "2952813233,1849856029")."""
    if kind not in ID_KINDS:
        raise ValueError(f"unknown identifier kind {kind!r}; kinds: {ID_KINDS}")
    value = value.strip()
    if kind == "doi":
        value = re.sub(r"^(https?://(dx\.)?doi\.org/|doi:\s*)", "", value, flags=re.I).lower()
    elif kind == "arxiv":
        value = _ARXIV_VERSION.sub("", re.sub(r"^arxiv:\s*", "", value, flags=re.I))
    elif kind == "pmcid":
        value = "PMC" + re.sub(r"^pmc", "", value, flags=re.I)
    elif kind == "mag":
        value = value.split(",")[0].strip()
    return value


def arxiv_id_from_name(name: str) -> str | None:
    """``2212.00001`` / ``hep-th9901001`` (arXiv's file names) -> the identifier, else None."""
    stem = name.split("/")[-1]
    for suffix in (".gz", ".pdf", ".tar", ".tgz"):
        stem = stem.removesuffix(suffix)
    if _ARXIV_NEW_NAME.match(stem):
        return _ARXIV_VERSION.sub("", stem)
    if match := _ARXIV_OLD_NAME.match(stem):
        return f"{match.group(1)}/{match.group(2)}"
    return None


@dataclass(frozen=True, slots=True)
class CitationSpan:
    """A citation marker inside a paragraph: ``text == paragraph.text[start:end]``."""

    start: int
    end: int
    text: str
    ref_id: str | None = None
    # Every entry the marker cites, in printed order, when that is more or other than ``ref_id``:
    # the 2, 3 and 4 of the "–[4]" span of "[1]–[4]", both entries of an unlinked "[3, 4]"
    # (filled by text/anchors.py's resolve_citations).
    cites: tuple[str, ...] = ()

    @property
    def ref_ids(self) -> tuple[str, ...]:
        """The bibliography entries this marker cites (none when the source gives no link)."""
        return self.cites or ((self.ref_id,) if self.ref_id else ())


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: str
    section: str
    cite_spans: tuple[CitationSpan, ...] = ()
    # Non-citation references (figures, tables, formulas) as (start, end, kind).
    ref_spans: tuple[tuple[int, int, str], ...] = ()
    sec_number: str | None = None
    # The paragraph's heading path, outermost first, where the source nests sections below
    # ``section`` (("Introduction", "Related work")); () when ``section`` is its only heading.
    headings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BibEntry:
    ref_id: str
    title: str | None = None
    year: int | None = None
    raw: str | None = None
    link: str | None = None
    # Author surnames in the entry's order (for "Smith et al. 2001"-style matching of anchors).
    authors: tuple[str, ...] = ()
    # Identifiers the entry states, keyed by ID_KINDS (see normalise_id).
    ids: dict[str, str] = field(default_factory=dict)
    # Where it appeared (a journal, proceedings or book title), as the source states it.
    venue: str | None = None


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
    # The paper's own identifiers, keyed by ID_KINDS (see normalise_id), and its abstract text.
    ids: dict[str, str] = field(default_factory=dict)
    abstract: str | None = None
    # Author names as the source prints them ("Ada Lovelace"), in order.
    authors: tuple[str, ...] = ()
