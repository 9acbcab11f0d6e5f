"""The one construction of a ``Paper`` every reader uses (``new_paper``), the normalized
``Paper.metadata`` it fills, and separate metadata files read compactly.

The paper filter (citeworth/curate/) knows only these keys:

- ``field_scheme``: "mag" | "s2" | "arxiv" -- how to read ``Paper.fields_of_study``;
- ``has_abstract``, ``has_body_text``, ``has_bib_entries``, ``has_ref_entries``: what the parse
  holds (and, when a metadata row reports the same fact, what the row says too, as the public
  CiteWorth filter checks the row);
- ``has_inbound_citations``: bool, or None when the source cannot tell (arXiv, no metadata row);
- ``venue_id``: the first present of journal / venue / arxiv id / ACL id / PubMed id / PMC id;
- ``year``: int or None;
- ``subject``: the finer subject a domain study groups papers by (eLife's heading, a PLOS taxonomy
  term, a journal's broad subject...), or None where the source gives none;
- ``collection``: what the input names the papers' collection (``InputSpec.collection``), else the
  reader's name.

``new_paper`` also records the paper's identifiers (``Paper.ids``: what the parse states, then
the kinds only its metadata row states) and its authors, from which curation keys the paper's
identity across sources (core/identity.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeworth.core.paper import BibEntry, Paper, Paragraph, normalise_id
from citeworth.sources.base import BadRecord, RecordError, Shard, guarded
from citeworth.sources.lines import iter_json_lines

METADATA_KEYS = ("field_scheme", "has_abstract", "has_body_text", "has_bib_entries", "has_ref_entries",
                 "has_inbound_citations", "venue_id", "year", "subject", "collection")

# S2ORC's venue-like ids, in the order the public CiteWorth filter reads them.
VENUE_KEYS = ("journal", "venue", "arxiv_id", "acl_id", "pubmed_id", "pmc_id")
_YEAR = re.compile(r"^\s*([12]\d{3})(?!\d)")


def first_present(*values: Any) -> str | None:
    """The first value that is a non-blank string or a non-zero number, as a string."""
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int) and not isinstance(value, bool) and value:
            return str(value)
    return None


def parse_year(value: Any) -> int | None:
    """2017, "2017" and "2011-11" -> the year; anything else -> None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1000 <= value <= 2999 else None
    if isinstance(value, str) and (match := _YEAR.match(value)):
        return int(match.group(1))
    return None


def unique(values: Iterable[str] | str) -> tuple[str, ...]:
    """Values in first-seen order without repeats or blanks (one string is one value)."""
    if isinstance(values, str):
        values = [values]
    return tuple(dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()))


# How sources name identifier kinds (GROBID idno types, JATS pub-id-types, S2ORC other_ids keys,
# unarXive ids keys), lower-cased -> core.paper.ID_KINDS.
_ID_ALIASES = {"doi": "doi", "arxiv": "arxiv", "arxiv_id": "arxiv", "pmid": "pmid", "pubmed": "pmid",
               "pubmed_id": "pmid", "pmcid": "pmcid", "pmc": "pmcid", "pmc_id": "pmcid",
               "pubmedcentral": "pmcid", "corpusid": "s2", "s2": "s2", "mag": "mag", "mag_id": "mag",
               "acl": "acl", "acl_id": "acl"}
# The identifier keys of an S2ORC record's or metadata row's own ids.
S2ORC_ID_KEYS = ("doi", "arxiv_id", "pubmed_id", "pmc_id", "mag_id", "acl_id")


def identifiers(pairs: Iterable[tuple[str | None, Any]]) -> dict[str, str]:
    """``{kind: normalised id}`` from a source's (kind name, value) pairs; unknown kinds and blank
    values are left out, the first value of a kind wins (a list value gives its first item)."""
    ids: dict[str, str] = {}
    for name, value in pairs:
        value = value[0] if isinstance(value, list) and value else value
        kind = _ID_ALIASES.get((name or "").strip().lower())
        if kind and kind not in ids and (text := first_present(value)):
            ids[kind] = normalise_id(kind, text)
    return ids


def one_line(text: Any) -> str | None:
    """Collapse the line breaks and runs of spaces some sources keep in titles."""
    if not isinstance(text, str):
        return None
    return " ".join(text.split()) or None


@dataclass(frozen=True, slots=True)
class PaperFacts:
    """What a separate metadata row says about a paper, kept small (a join may buffer many)."""

    title: str | None
    fields: tuple[str, ...]
    year: int | None
    venue_id: str | None
    has_inbound_citations: bool | None
    # The row's own view of the parse (None = the row does not say).
    has_abstract: bool | None = None
    has_body_text: bool | None = None
    has_bib_entries: bool | None = None
    has_ref_entries: bool | None = None
    ids: dict[str, str] = field(default_factory=dict)  # normalised (see identifiers)
    authors: tuple[str, ...] = ()


NO_ROW = PaperFacts(None, (), None, None, None)


def new_paper(
    shard: Shard,
    *,
    paper_id: str,
    title: str | None,
    paragraphs: list[Paragraph],
    bib_entries: dict[str, BibEntry],
    abstract: str | None,
    ids: Iterable[tuple[str | None, Any]],
    field_scheme: str,
    has_ref_entries: bool,
    venue_id: str | None,
    year: int | None,
    fields_of_study: tuple[str, ...] = (),
    authors: tuple[str, ...] = (),
    row: PaperFacts | None = None,
    extra: dict | None = None,
    subject: str | None = None,
) -> Paper:
    """The Paper a reader read from ``shard`` (its reader, release and name are the provenance).

    ``ids``: the (kind name, value) pairs the source states (see ``identifiers``). ``row``: the
    paper's separate metadata row: its title, fields, venue, year and inbound citations come first,
    its identifiers fill the kinds the parse lacks, its authors stand in when the parse names none,
    and a parse fact it contradicts is false (``agree``). Without a row, inbound citations are
    unknown (None). ``extra``: metadata keys of the reader's own, beside the normalised ones."""
    row = row or NO_ROW
    identified = identifiers(ids)
    for kind, value in row.ids.items():
        identified.setdefault(kind, value)
    return Paper(
        paper_id=paper_id,
        title=row.title or title,
        fields_of_study=row.fields or fields_of_study,
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        source=shard.reader,
        release=shard.release,
        shard=shard.name,
        metadata={
            "field_scheme": field_scheme,
            "has_abstract": agree(bool(abstract), row.has_abstract),
            "has_body_text": agree(bool(paragraphs), row.has_body_text),
            "has_bib_entries": agree(bool(bib_entries), row.has_bib_entries),
            "has_ref_entries": agree(has_ref_entries, row.has_ref_entries),
            "has_inbound_citations": row.has_inbound_citations,
            "venue_id": row.venue_id or venue_id,
            "year": row.year or year,
            "subject": subject,
            "collection": shard.collection or shard.reader,
            **(extra or {}),
        },
        ids=identified,
        abstract=abstract or None,
        authors=authors or row.authors,
    )


def agree(from_parse: bool, from_row: bool | None) -> bool:
    """A parse fact, vetoed by a metadata row that says otherwise."""
    return from_parse and from_row is not False


def _flag(row: dict, key: str) -> bool | None:
    value = row.get(key)
    return value if isinstance(value, bool) else None


def paper_id_of(record: dict) -> str:
    """The ``paper_id`` of an S2ORC / unarXive record or S2ORC metadata row, as a string."""
    if record.get("paper_id") in (None, ""):
        raise RecordError("missing_key:paper_id", "record has no paper_id")
    return str(record["paper_id"])


def s2orc_row_facts(row: dict) -> PaperFacts:
    """A row of the S2ORC 20200705 metadata (``metadata_N.jsonl.gz`` or its ``sample.jsonl``)."""
    abstract = _flag(row, "has_pdf_parsed_abstract")
    if "abstract" in row and not row["abstract"]:
        abstract = False  # the public filter also requires the row's own abstract text
    return PaperFacts(
        title=one_line(row.get("title")),
        fields=unique(row.get("mag_field_of_study") or ()),
        year=parse_year(row.get("year")),
        venue_id=first_present(*(row.get(key) for key in VENUE_KEYS)),
        has_inbound_citations=_flag(row, "has_inbound_citations"),
        has_abstract=abstract,
        has_body_text=_flag(row, "has_pdf_parsed_body_text"),
        has_bib_entries=_flag(row, "has_pdf_parsed_bib_entries"),
        has_ref_entries=_flag(row, "has_pdf_parsed_ref_entries"),
        ids=s2orc_ids(row),
        authors=s2orc_authors(row),
    )


def s2orc_ids(record: dict) -> dict[str, str]:
    """The ids an S2ORC record's ``metadata`` or an S2ORC metadata row states; a numeric
    ``paper_id`` is the Semantic Scholar corpus id."""
    paper_id = str(record.get("paper_id") or "")
    return identifiers([*((key, record.get(key)) for key in S2ORC_ID_KEYS),
                        ("s2", paper_id if paper_id.isdigit() else None)])


def s2orc_authors(record: dict) -> tuple[str, ...]:
    """"First Middle Last" of each S2ORC author object of ``record["authors"]``."""
    authors = record.get("authors") if isinstance(record.get("authors"), list) else []
    return tuple(name for author in authors if (name := _s2orc_name(author)))


def _s2orc_name(author: Any) -> str | None:
    if not isinstance(author, dict):
        return None
    middle = author.get("middle") if isinstance(author.get("middle"), list) else []
    parts = (author.get("first"), *middle, author.get("last"))
    return one_line(" ".join(str(part) for part in parts if part))


def lower_keys(mapping: Any) -> dict:
    """Key-case variants (``ArXiv`` / ``arxiv``) folded to lower case."""
    return {str(k).lower(): v for k, v in mapping.items()} if isinstance(mapping, dict) else {}


def s2_corpus_id(row: dict) -> str:
    """The S2 ``corpusid`` (also spelled ``corpusId``) as a string."""
    for key in ("corpusid", "corpusId"):
        if row.get(key) not in (None, ""):
            return str(row[key])
    raise RecordError("missing_key:corpusid", "record has neither corpusid nor corpusId")


def s2_fields(row: dict) -> tuple[str, ...]:
    """``s2fieldsofstudy`` categories in order (external and model sources merged), else the older
    ``fieldsofstudy`` list."""
    s2 = row.get("s2fieldsofstudy") or row.get("s2FieldsOfStudy") or ()
    categories = unique(item.get("category") for item in s2 if isinstance(item, dict))
    return categories or unique(row.get("fieldsofstudy") or row.get("fieldsOfStudy") or ())


def s2_papers_facts(row: dict) -> PaperFacts:
    """A row of the S2 datasets API ``papers`` dataset."""
    ids = lower_keys(row.get("externalids") or row.get("externalIds"))
    journal = row.get("journal")
    journal = journal.get("name") if isinstance(journal, dict) else journal
    citations = row.get("citationcount", row.get("citationCount"))
    authors = row.get("authors") if isinstance(row.get("authors"), list) else []
    return PaperFacts(
        title=one_line(row.get("title")),
        fields=s2_fields(row),
        year=parse_year(row.get("year")),
        venue_id=first_present(journal, row.get("venue"), ids.get("arxiv"), ids.get("acl"), ids.get("pubmed"),
                               ids.get("pubmedcentral")),
        has_inbound_citations=citations > 0 if isinstance(citations, int) else None,
        ids=s2_ids(row),
        authors=tuple(name for author in authors
                      if isinstance(author, dict) and (name := one_line(author.get("name")))),
    )


def s2_ids(row: dict) -> dict[str, str]:
    """The ids of an S2 datasets API record (``externalids`` and its corpus id)."""
    external = lower_keys(row.get("externalids") or row.get("externalIds"))
    return identifiers([*external.items(), ("corpusid", row.get("corpusid", row.get("corpusId")))])


@dataclass
class MetadataIndex:
    """Facts by paper id from one metadata file, plus the bad rows met while reading it."""

    facts: dict[str, PaperFacts]
    bad: list[BadRecord]

    @property
    def broken(self) -> bool:
        return any(record.fatal for record in self.bad)


def load_index(
    path: str,
    shard: Shard,
    row_id: Callable[[dict], str],
    row_facts: Callable[[dict], PaperFacts],
    wanted: set[str] | None = None,
) -> MetadataIndex:
    """Read ``path`` keeping only the rows whose id is in ``wanted`` (all when None), so memory
    follows the shard, not the metadata file."""
    facts: dict[str, PaperFacts] = {}
    bad: list[BadRecord] = []
    for item in metadata_rows(path, shard, row_id):
        if isinstance(item, BadRecord):
            bad.append(item)
        elif item.paper_id not in facts and (wanted is None or item.paper_id in wanted):
            found = item.facts(shard, row_facts)
            if isinstance(found, BadRecord):
                bad.append(found)
            else:
                facts[item.paper_id] = found
    return MetadataIndex(facts, bad)


def shard_facts(
    shard: Shard,
    row_id: Callable[[dict], str],
    row_facts: Callable[[dict], PaperFacts],
    wanted: Callable[[], set[str]],
) -> Generator[BadRecord, None, dict[str, PaperFacts] | None]:
    """The facts of the shard's metadata file ({} without one); yields its bad rows. Returns None
    when the file is broken (the shard cannot be read reliably). ``wanted`` is called only when
    there is a metadata file, since listing the shard's ids reads its files."""
    if not shard.metadata:
        return {}
    index = load_index(shard.metadata, shard, row_id, row_facts, wanted())
    yield from index.bad
    return None if index.broken else index.facts


@dataclass(frozen=True, slots=True)
class MetadataRow:
    paper_id: str
    row: dict
    location: str  # "<file name> line N"
    raw: bytes

    def facts(self, shard: Shard, row_facts: Callable[[dict], PaperFacts]) -> PaperFacts | BadRecord:
        """The row's facts, or the BadRecord that quarantines the row."""
        return guarded(shard, self.location, self.raw, row_facts, self.row)


def metadata_rows(
    path: str, shard: Shard, row_id: Callable[[dict], str]
) -> Iterator[MetadataRow | BadRecord]:
    """Every metadata line as a MetadataRow, or a BadRecord located by the metadata file's name."""
    label = Path(path).name
    for item in iter_json_lines(path, shard, label=label):
        if isinstance(item, BadRecord):
            yield item
            continue
        line, row = item
        location = f"{label} line {line.number}"
        paper_id = guarded(shard, location, line.data, row_id, row)
        yield paper_id if isinstance(paper_id, BadRecord) else MetadataRow(paper_id, row, location, line.data)
