"""PMC JATS XML (``.nxml``, the PMC Open Access format): one article per file.

Body paragraphs are the ``<p>`` elements of ``<body>`` and its ``<sec>``s (not those of figure
captions, tables or footnotes), in document order; a paragraph's section is the title (and
``<label>`` number) of its top-level ``<sec>``, "" for paragraphs before the first one. Citations
are ``<xref ref-type="bibr">`` (ref id = ``rid``); other ``<xref>``s (figures, tables,
supplementary material, sections, footnotes) and formulas are ``ref_spans`` (see markup.py for
how the text and spans are built). The bibliography is the ``<ref-list>`` (with author surnames and
``pub-id``s); citations without a ``rid`` and ranges over two ``<xref>``s are resolved by
text/anchors.py. The front matter gives the abstract, authors and article ids.

Fields of study: JATS has no MAG fields, so the reader gives the source's own terms with the scheme
that says how text/fields.py maps them to one CiteWorth field, by the first rule that applies:

1. PLOS taxonomy (``plos``): the article's PLOS ``Discipline`` subject groups -- the taxonomy's paths,
   e.g. "Biology and life sciences/Neuroscience/Brain mapping", of the newest version it carries
   (``Discipline-v3``, then ``-v2``, then the flat v1 ``Discipline`` terms); a PLOS journal article
   without them takes its journal's field where the PLOS table gives one (PLOS Medicine).
2. eLife subject headings (``elife``): an eLife article's ``subj-group-type="heading"`` subjects
   ("Neuroscience", "Human biology and medicine"), mapped by ``text/data/elife_subjects.tsv``.
3. Article subjects (``pmc``): the article's ``<subject>``s that name one field through a small word
   list (``text/field_words.py``: "Microbiology" -> Biology, "Oncology" -> Medicine; a section heading
   such as "Research Article" names none), as CiteWorth field names.
4. The journal (``journal``): the broad subject ``text/data/journal_subjects.tsv`` gives the article's
   journal (by ISSN, else title; e.g. Oncotarget -> "Neoplasms"), mapped by ``subject_fields.tsv``.
5. The journal title's words (``pmc``), for a journal the table does not list ("BMC Microbiology" ->
   Biology, "Annals of Oncology" -> Medicine).
6. The references (``references``): for a journal the table lists as multidisciplinary (Scientific
   Reports, PLOS ONE, Nature Communications, F1000Research...) or one nothing above decides, the
   fields named by the journals its references cite, counted (``"Biology: 31"``): the field of more
   than half of them (text/fields.py).

An article nothing decides has no field, and the curation rejects it with that reason. The fields are
CiteWorth fields derived by these rules, not MAG's own assignment; ``field_scheme`` says which rule.

Subject (``Paper.metadata["subject"]``, for a domain study over real subjects): the PLOS taxonomy's
second-level term under the winning field that most of its paths name; eLife's first heading (eLife
lists an article's one to three headings alphabetically); the article subject that named its field;
the journal's broad subject. None where the field comes from the journal title's words or the
references: they name a field, not a subject.

Text: inline markup keeps its text; the parts of a taxon name that Pensoft's JATS writes as adjacent
``<named-content>`` elements with nothing between them (``D.`` + ``durum``) are set off by a space, as
the publisher renders them (markup.py's ``WORD``); a superscript number right after a digit is an
exponent, ``10^6`` (``EXPONENT``: flattened, ``10<sup>6</sup>`` would read "106"); typographic
ligatures become their letters.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources.base import BadRecord, RecordError, Shard
from citeworth.sources.facts import first_present, identifiers, new_paper, one_line, parse_year, unique
from citeworth.sources.markup import (
    BLOCK,
    EXPONENT,
    PLACEHOLDER,
    SKIP,
    SPAN,
    WORD,
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
from citeworth.text.field_words import field_of
from citeworth.text.fields import (
    MULTIDISCIPLINARY,
    journal_subject,
    plos_journal_field,
    plos_subject,
    reference_votes,
)

PMC_SCHEME = "pmc"
PLOS_SCHEME = "plos"
# PLOS's subject-group types, newest taxonomy first; an article is indexed with the first it has.
PLOS_TAXONOMIES = ("Discipline-v3", "Discipline-v2", "Discipline")
ELIFE = frozenset({"elife", "2050-084x"})  # eLife's journal title and ISSN, lower-cased
# Pensoft's taxon-name parts (JATS named-content types, TaxPub's taxon-name-part types): set off by a
# space where the XML puts two of them side by side.
TAXON_PARTS = frozenset({
    "taxon-name", "genus-species", "kingdom", "phylum", "class", "order", "family", "subfamily", "tribe",
    "genus", "subgenus", "species", "subspecies", "variety", "form", "infraspecific-rank", "infraspecific",
    "uncertainty-rank", "authority",
})

_XREF_KINDS = {"fig": "figure", "table": "table", "disp-formula": "formula", "supplementary-material":
               "supplementary", "sec": "section", "fn": "footnote", "table-fn": "footnote"}
_FLOATS = frozenset({"fig", "fig-group", "table-wrap", "table-wrap-group", "supplementary-material",
                     "boxed-text", "fn", "chem-struct-wrap", "graphic", "inline-graphic", "media"})
_BLOCKS = frozenset({"list", "list-item", "p", "disp-quote", "def-list", "def-item", "break", "title"})
_FORMULAS = frozenset({"inline-formula", "disp-formula"})
_TAXON_ELEMENTS = frozenset({"named-content", "taxon-name", "taxon-name-part"})
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
    pmc = (ids.get("pmc") or ids.get("pmcid") or "").removeprefix("PMC")  # "pmcid": Europe PMC's spelling
    paper_id = f"PMC{pmc}" if pmc else first_present(ids.get("doi"), Path(path).stem)
    body = article.find("body")
    bib_entries = _bib_entries(article)
    paragraphs = resolve_citations(list(_paragraphs(body, paper_id)) if body is not None else [], bib_entries)
    abstract = " ".join(text for a in meta.findall("abstract") if (text := paragraphs_text(a)))
    journal_title = text_of(journal.find(".//journal-title")) if journal is not None else ""
    scheme, fields, subject = _fields_of_study(article, meta, journal_title, _issns(journal))
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
        subject=subject,
    )


def _fields_of_study(article: ET.Element, meta: ET.Element, journal: str,
                     issns: list[str]) -> tuple[str, tuple[str, ...], str | None]:
    """``(field_scheme, terms, subject)`` by the first rule of the module docstring that applies."""
    groups = meta.findall("article-categories/subj-group")
    for taxonomy in PLOS_TAXONOMIES:
        chosen = [group for group in groups if group.get("subj-group-type") == taxonomy]
        if chosen:
            paths = unique(path for group in chosen for path in plos_paths(group))
            return PLOS_SCHEME, paths, plos_subject(paths, journal)
    if journal.lower().startswith("plos") and plos_journal_field(journal):
        return PLOS_SCHEME, (), None
    headings = unique(text_of(subject) for group in groups if group.get("subj-group-type") == "heading"
                      for subject in group.findall("subject"))
    if headings and ELIFE & {journal.lower(), *(issn.lower() for issn in issns)}:
        return "elife", headings, headings[0]
    return _pmc_fields(article, _subjects(meta), journal, issns)


def _pmc_fields(article: ET.Element, subjects: list[str], journal: str,
                issns: list[str]) -> tuple[str, tuple[str, ...], str | None]:
    """Rules 3 to 6 of the module docstring: subjects, journal table, journal title, references."""
    named = [(term, field) for term in subjects if (field := field_of(term))]
    if named:
        return PMC_SCHEME, unique(field for _, field in named), named[0][0]
    subject = journal_subject(journal, issns)
    if subject is not None and subject != MULTIDISCIPLINARY:
        return "journal", (subject,), subject
    if subject is None and (field := field_of(journal)):
        return PMC_SCHEME, (field,), None
    return "references", reference_votes(_cited_journals(article)), None


def _cited_journals(article: ET.Element) -> Iterator[str]:
    """The ``<source>`` of each reference to a journal (a reference that does not say its kind too)."""
    for ref_list in article.iter("ref-list"):
        for ref in ref_list.findall("ref"):
            citation = next((c for c in ref if local_name(c) in _CITATIONS), None)
            if citation is None:
                continue
            kind = citation.get("publication-type") or citation.get("citation-type") or "journal"
            if kind == "journal" and (source := text_of(citation.find("source"))):
                yield source


def plos_paths(group: ET.Element, above: tuple[str, ...] = ()) -> list[str]:
    """Root-to-leaf paths ("A/B/C") of a (nested) PLOS subject group."""
    nested = group.findall("subj-group")
    paths = []
    for subject in group.findall("subject"):
        path = (*above, text_of(subject))
        paths += [p for child in nested for p in plos_paths(child, path)] if nested else ["/".join(path)]
    return paths


def _subjects(meta: ET.Element) -> list[str]:
    return [text_of(subject) for group in meta.findall("article-categories/subj-group")
            for subject in group.findall("subject")]


def _issns(journal: ET.Element | None) -> list[str]:
    return [text_of(issn) for issn in journal.findall("issn")] if journal is not None else []


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
    if name in _TAXON_ELEMENTS and _taxon_part(element):
        return Markup(WORD)
    if name == "sup":
        return Markup(EXPONENT)
    if name in _FLOATS:
        return Markup(SKIP)
    return Markup(BLOCK) if name in _BLOCKS else None


def _taxon_part(element: ET.Element) -> bool:
    kind = element.get("content-type") or element.get("taxon-name-part-type") or local_name(element)
    return kind.lower() in TAXON_PARTS


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
