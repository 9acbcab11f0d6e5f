"""PMC JATS XML (``.nxml``, the PMC Open Access format): one article per file.

Body paragraphs are the ``<p>`` elements of ``<body>`` and its ``<sec>``s (not those of figure
captions, tables or footnotes), in document order; a paragraph's section is the title (and
``<label>`` number) of its top-level ``<sec>``, "" for paragraphs before the first one. Citations
are ``<xref ref-type="bibr">`` (ref id = ``rid``); other ``<xref>``s (figures, tables,
supplementary material, sections, footnotes) and formulas are ``ref_spans`` (see markup.py for
how the text and spans are built). The bibliography is the ``<ref-list>`` (with author surnames and
``pub-id``s); citations without a ``rid`` and ranges over two ``<xref>``s are resolved by
text/anchors.py. The front matter gives the abstract, authors and article ids.

Fields of study, PLOS articles (a PLOS journal, or PLOS's ``Discipline`` subject groups): the
source's own list -- the PLOS subject taxonomy's paths, e.g. "Biology and life sciences/Neuroscience/
Brain mapping", of the newest taxonomy version the article carries (``Discipline-v3``, then
``-v2``, then the flat v1 ``Discipline`` terms) -- with ``field_scheme`` "plos"; the curation maps
them to one CiteWorth field (text/fields.py). An article with no subject terms has an empty list
(its journal may still decide).

Fields of study, other articles: JATS has no MAG fields, so ``pmc_fields`` maps the article's broad subjects
(the top-level ``<subject>``s of ``<article-categories>``: the PMC heading, PLOS disciplines) to
CiteWorth fields by a small word list (``FIELD_WORDS``), and when none maps, the journal title
(e.g. "BMC Microbiology" -> Biology, "Annals of Oncology" -> Medicine). A term that names two
fields ("Computational Biology") maps to none. Nearly all PMC articles come out as Medicine or
Biology -- that is what PMC holds. ``field_scheme`` is "pmc": the fields are CiteWorth names
derived by this mapping, not MAG's own assignment. An article nothing maps has no field, and the
curation rejects it with that reason.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources.base import BadRecord, RecordError, Shard
from citeworth.sources.facts import first_present, identifiers, new_paper, one_line, parse_year, unique
from citeworth.sources.markup import (
    BLOCK,
    PLACEHOLDER,
    SKIP,
    SPAN,
    Markup,
    flatten,
    local_name,
    nested,
    paragraphs_text,
    read_xml_files,
    require_root,
    text_of,
)
from citeworth.sources.spans import CITE, make_paragraph
from citeworth.text.anchors import resolve_citations

FIELD_SCHEME = "pmc"
PLOS_SCHEME = "plos"
# PLOS's subject-group types, newest taxonomy first; an article is indexed with the first it has.
PLOS_TAXONOMIES = ("Discipline-v3", "Discipline-v2", "Discipline")

# Word stems (at a word start, case-insensitive) that name a CiteWorth field in a PMC subject or
# journal title. MAG files veterinary science, epidemiology and public health under Medicine.
FIELD_WORDS = {
    "Medicine": r"medic|clinic|oncolog|cancer|tumou?r|epidemiolog|health|disease|patholog|pharmac|surg"
                r"|dent|oral|nurs|veterinar|cardiolog|pa?ediatr|infect|therap|neurolog|psychiatr",
    "Biology": r"biolog|biochem|microbio|genetic|genomic|ecolog|evolution|zoolog|botan|plant|virolog"
               r"|physiolog|neurosci|bioinformatic|molecular",
    "Chemistry": r"chemi",
    "Physics": r"physics",
    "Mathematics": r"mathemat|statistic",
    "Computer Science": r"comput|informatic",
    "Engineering": r"engineer",
    "Materials Science": r"materials?\b",
    "Economics": r"econom",
    "Psychology": r"psycholog|behaviou?r|cognit",
}
_FIELD_PATTERNS = {field: re.compile(rf"\b(?:{words})", re.IGNORECASE)
                   for field, words in FIELD_WORDS.items()}

_XREF_KINDS = {"fig": "figure", "table": "table", "disp-formula": "formula", "supplementary-material":
               "supplementary", "sec": "section", "fn": "footnote", "table-fn": "footnote"}
_FLOATS = frozenset({"fig", "fig-group", "table-wrap", "table-wrap-group", "supplementary-material",
                     "boxed-text", "fn", "chem-struct-wrap", "graphic", "inline-graphic", "media"})
_BLOCKS = frozenset({"list", "list-item", "p", "disp-quote", "def-list", "def-item", "break", "title"})
_FORMULAS = frozenset({"inline-formula", "disp-formula"})
_DATE_PREFERENCE = ("epub", "ppub", "pub", "collection")
_CITATIONS = frozenset({"mixed-citation", "element-citation", "citation", "nlm-citation"})


def read(shard: Shard) -> Iterator[Paper | BadRecord]:
    return read_xml_files(shard, paper_from_jats)


def paper_from_jats(article: ET.Element, path: str, shard: Shard) -> Paper:
    require_root(article, "article", path)
    meta = article.find("front/article-meta")
    if meta is None:
        raise RecordError("missing_key:article-meta", f"{Path(path).name} has no front/article-meta")
    journal = article.find("front/journal-meta")
    ids = {a.get("pub-id-type"): text_of(a) for a in meta.findall("article-id")}
    pmc = ids.get("pmc", "").removeprefix("PMC")
    paper_id = f"PMC{pmc}" if pmc else first_present(ids.get("doi"), Path(path).name.removesuffix(".nxml"))
    body = article.find("body")
    bib_entries = _bib_entries(article)
    paragraphs = resolve_citations(list(_paragraphs(body, paper_id)) if body is not None else [], bib_entries)
    abstract = " ".join(text for a in meta.findall("abstract") if (text := paragraphs_text(a)))
    journal_title = text_of(journal.find(".//journal-title")) if journal is not None else ""
    scheme, fields = _fields_of_study(meta, journal_title)
    return new_paper(
        shard,
        paper_id=paper_id,
        title=one_line(text_of(meta.find("title-group/article-title"))),
        fields_of_study=fields,
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        abstract=abstract,
        ids=ids.items(),
        authors=tuple(_names(meta.findall("contrib-group/contrib[@contrib-type='author']/name"))),
        field_scheme=scheme,
        has_ref_entries=any(article.find(f".//{tag}") is not None for tag in ("fig", "table-wrap")),
        venue_id=first_present(journal_title, *_journal_ids(journal), pmc),
        year=_year(meta),
    )


def _fields_of_study(meta: ET.Element, journal_title: str) -> tuple[str, tuple[str, ...]]:
    """``(field_scheme, fields)``: PLOS taxonomy paths for a PLOS article, else mapped PMC fields."""
    groups = meta.findall("article-categories/subj-group")
    for taxonomy in PLOS_TAXONOMIES:
        chosen = [group for group in groups if group.get("subj-group-type") == taxonomy]
        if chosen:
            return PLOS_SCHEME, unique(path for group in chosen for path in plos_paths(group))
    if journal_title.lower().startswith("plos"):
        return PLOS_SCHEME, ()
    return FIELD_SCHEME, pmc_fields(_subjects(meta), journal_title)


def plos_paths(group: ET.Element, above: tuple[str, ...] = ()) -> list[str]:
    """Root-to-leaf paths ("A/B/C") of a (nested) PLOS subject group."""
    nested = group.findall("subj-group")
    paths = []
    for subject in group.findall("subject"):
        path = (*above, text_of(subject))
        paths += [p for child in nested for p in plos_paths(child, path)] if nested else ["/".join(path)]
    return paths


def pmc_fields(subjects: list[str], journal_title: str) -> tuple[str, ...]:
    """CiteWorth fields named by the subjects, else by the journal title (see the module docstring)."""
    from_subjects = unique(field for term in subjects if (field := field_of(term)))
    return from_subjects or unique([field_of(journal_title) or ""])


def field_of(term: str) -> str | None:
    """The one CiteWorth field ``term`` names, or None (no field, or two)."""
    found = [field for field, pattern in _FIELD_PATTERNS.items() if pattern.search(term)]
    return found[0] if len(found) == 1 else None


def _subjects(meta: ET.Element) -> list[str]:
    return [text_of(subject) for group in meta.findall("article-categories/subj-group")
            for subject in group.findall("subject")]


def _journal_ids(journal: ET.Element | None) -> list[str]:
    return [text_of(j) for j in journal.findall("journal-id")] if journal is not None else []


def _year(meta: ET.Element) -> int | None:
    """The publication year: electronic, then print, then any other date's."""
    dates = {(d.get("pub-type") or d.get("date-type")): parse_year(d.findtext("year"))
             for d in meta.findall("pub-date")}
    ordered = [dates.get(kind) for kind in _DATE_PREFERENCE] + list(dates.values())
    return next((year for year in ordered if year), None)


def _paragraphs(body: ET.Element, paper_id: str) -> Iterator[Paragraph]:
    parents = {child: parent for parent in body.iter() for child in parent}
    for index, (element, section) in enumerate(_body_paragraphs(body)):
        text, spans = flatten(element, _classify)
        if text:  # a <p> that only wraps a figure or table is no paragraph
            title, number = _heading(section)
            yield make_paragraph(text, title, spans, f"{paper_id} body p[{index}]", sec_number=number,
                                 headings=_heading_path(element, parents))


def _heading_path(element: ET.Element, parents: dict[ET.Element, ET.Element]) -> tuple[str, ...]:
    """Titles of the ``<sec>``s around ``element``, outermost first."""
    titles = []
    while (element := parents.get(element)) is not None:
        if local_name(element) == "sec":
            titles.append(text_of(element.find("title")))
    return tuple(reversed(titles))


def _heading(section: ET.Element | None) -> tuple[str, str | None]:
    """Title and number (``<label>``) of a top-level section; ("", None) before the first one."""
    if section is None:
        return "", None
    return text_of(section.find("title")), text_of(section.find("label")) or None


def _body_paragraphs(body: ET.Element) -> Iterator[tuple[ET.Element, ET.Element | None]]:
    """``(<p>, its top-level <sec> or None)`` in document order."""
    for paragraph, sections in nested(body, "p", "sec"):
        yield paragraph, sections[0] if sections else None


def _classify(element: ET.Element) -> Markup | None:
    name = local_name(element)
    if name == "xref":
        ref_type = element.get("ref-type") or ""
        if ref_type == "bibr":
            return Markup(SPAN, CITE, (element.get("rid") or "").strip() or None)
        return Markup(SPAN, _XREF_KINDS.get(ref_type, ref_type or "other"), element.get("rid"))
    if name in _FORMULAS:
        return Markup(PLACEHOLDER, "formula", element.get("id"))
    if name in _FLOATS:
        return Markup(SKIP)
    return Markup(BLOCK) if name in _BLOCKS else None


def _bib_entries(article: ET.Element) -> dict[str, BibEntry]:
    entries = {}
    for ref_list in article.iter("ref-list"):
        for ref in ref_list.findall("ref"):
            ref_id = ref.get("id")
            if not ref_id:
                continue
            citation = next((c for c in ref if local_name(c) in _CITATIONS), ref)
            entries[ref_id] = BibEntry(
                ref_id=ref_id,
                title=one_line(text_of(citation.find("article-title")) or text_of(citation.find("source"))),
                year=parse_year(text_of(citation.find("year"))),
                raw=_raw_citation(citation),
                link=first_present(*(text_of(p) for p in citation.findall("pub-id"))),
                authors=tuple(text_of(n) for n in citation.iterfind(".//name/surname") if text_of(n)),
                ids=identifiers((p.get("pub-id-type"), text_of(p)) for p in citation.findall("pub-id")),
                # <source> is the journal or book of an article, else (no <article-title>) the work itself
                venue=one_line(text_of(citation.find("source"))) if citation.find("article-title") is not None
                else None,
            )
    return entries


def _names(names: list[ET.Element]) -> list[str]:
    """"Given-names Surname" of each ``<name>`` that has a surname."""
    return [" ".join(filter(None, (text_of(name.find("given-names")), text_of(name.find("surname")))))
            for name in names if text_of(name.find("surname"))]


def _raw_citation(citation: ET.Element) -> str | None:
    """The reference as printed: mixed citations carry their punctuation, element citations only
    their parts (joined by spaces)."""
    if local_name(citation) == "element-citation":
        return one_line(" ".join(citation.itertext()))
    return one_line("".join(citation.itertext()))
