"""GROBID TEI XML (``.tei.xml``, or the official client's ``.grobid.tei.xml``): one PDF's parse per
file; the paper id is the file's stem.

Body paragraphs are the ``<p>``s of ``<text><body>``'s ``<div>``s, in document order; a
paragraph's section is its ``<div>``'s ``<head>`` ("" for a div without one), or, when the head
is numbered ``n="2.1"``, the title of the div numbered "2" (GROBID writes sections as flat
sibling divs). Citations are ``<ref type="bibr" target="#b3">`` (ref id "b3"); figure, table,
formula and footnote ``<ref>``s and inline ``<formula>``s are ``ref_spans`` (see markup.py). The
bibliography is ``<listBibl><biblStruct xml:id>`` (title, year, raw reference, author surnames, DOI /
arXiv / PubMed ids). Citations GROBID left without a target, or printed as a range over two
``<ref>``s ("[1]–[4]"), are resolved by number or by surname + year (text/anchors.py). The header
gives the paper's abstract, authors and identifiers.

TEI does not know fields of study. ``metadata`` may name a JSONL whose rows are S2ORC-style
metadata rows (``mag_field_of_study``, ``year``, ``journal`` / ``venue``, ``has_inbound_citations``,
...) with a ``file_stem`` key: the TEI file's name without ``.tei.xml``. Without a row a paper has
no field of study (``field_scheme`` "mag") and the curation rejects it as ``no_fields_of_study``.
Venue and year otherwise come from the TEI header (journal title or ISSN; publication date).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources.base import BadRecord, RecordError, Shard
from citeworth.sources.facts import (
    PaperFacts,
    first_present,
    identifiers,
    new_paper,
    one_line,
    parse_year,
    s2orc_row_facts,
    shard_facts,
)
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

TEI = "http://www.tei-c.org/ns/1.0"
NS = {"t": TEI}
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
STEM_KEY = "file_stem"
# File name endings of GROBID output, longest first: the official client writes ``.grobid.tei.xml``.
SUFFIXES = (".grobid.tei.xml", ".tei.xml", ".xml")

_REF_KINDS = {"figure": "figure", "table": "table", "formula": "formula", "foot": "footnote",
              "section": "section"}
_SKIPPED = frozenset({"figure", "table", "note", "graphic"})


def read(shard: Shard) -> Iterator[Paper | BadRecord]:
    facts = yield from shard_facts(shard, _row_stem, s2orc_row_facts, lambda: {stem(p) for p in shard.paths})
    if facts is None:
        return
    yield from read_xml_files(shard, lambda root, path, shard_: paper_from_tei(root, path, shard_,
                                                                              facts.get(stem(path))))


def stem(path: str) -> str:
    """The file name without ``.grobid.tei.xml``, ``.tei.xml`` or ``.xml``: the paper id and the
    metadata key."""
    name = Path(path).name
    return next((name.removesuffix(suffix) for suffix in SUFFIXES if name.endswith(suffix)), name)


def _row_stem(row: dict) -> str:
    if row.get(STEM_KEY) in (None, ""):
        raise RecordError(f"missing_key:{STEM_KEY}", f"metadata row has no {STEM_KEY}")
    return str(row[STEM_KEY])


def paper_from_tei(root: ET.Element, path: str, shard: Shard, facts: PaperFacts | None) -> Paper:
    require_root(root, "TEI", path)
    paper_id = stem(path)
    body = root.find("t:text/t:body", NS)
    if body is None:
        raise RecordError("missing_key:body", f"{Path(path).name} has no <text><body>")
    bib_entries = _bib_entries(root)
    paragraphs = resolve_citations(list(_paragraphs(body, paper_id)), bib_entries)
    header = root.find("t:teiHeader/t:fileDesc", NS)
    header = header if header is not None else ET.Element("fileDesc")
    source = header.find("t:sourceDesc/t:biblStruct", NS)
    abstract = paragraphs_text(root.find("t:teiHeader/t:profileDesc/t:abstract", NS))
    return new_paper(
        shard,
        paper_id=paper_id,
        title=one_line(text_of(header.find("t:titleStmt/t:title", NS))),
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        abstract=abstract,
        ids=_ids(source).items(),
        authors=_authors(source),
        field_scheme="mag",
        has_ref_entries=root.find("t:text//t:figure", NS) is not None,
        venue_id=_venue(header),
        year=_year(header),
        row=facts,
    )


def _ids(bibl: ET.Element | None) -> dict[str, str]:
    """DOI, arXiv, PubMed and PMC ids of a ``<biblStruct>`` (``<idno type="DOI">`` ...)."""
    return identifiers((idno.get("type"), text_of(idno)) for idno in bibl.iter(f"{{{TEI}}}idno")) \
        if bibl is not None else {}


def _authors(bibl: ET.Element | None) -> tuple[str, ...]:
    """"Forename(s) Surname" of each author of the paper's own ``<biblStruct>``."""
    names = []
    for person in bibl.iterfind("t:analytic/t:author/t:persName", NS) if bibl is not None else ():
        if surname := text_of(person.find("t:surname", NS)):
            names.append(" ".join([*(text_of(f) for f in person.findall("t:forename", NS)), surname]))
    return tuple(names)


def _venue(header: ET.Element) -> str | None:
    source = header.find("t:sourceDesc/t:biblStruct", NS)
    if source is None:
        return None
    journal = text_of(source.find("t:monogr/t:title[@level='j']", NS))
    ids = {idno.get("type", "").lower(): text_of(idno) for idno in source.iter(f"{{{TEI}}}idno")}
    return first_present(journal, ids.get("issn"), ids.get("eissn"), ids.get("arxiv"))


def _year(header: ET.Element) -> int | None:
    for path in ("t:publicationStmt/t:date", "t:sourceDesc/t:biblStruct/t:monogr/t:imprint/t:date"):
        date = header.find(path, NS)
        if date is not None and (year := parse_year(date.get("when") or text_of(date))):
            return year
    return None


def _paragraphs(body: ET.Element, paper_id: str) -> Iterator[Paragraph]:
    titles = _numbered_titles(body)
    for index, (element, head) in enumerate(_body_paragraphs(body)):
        text, spans = flatten(element, _classify)
        if text:
            title, number = _section(head, titles)
            own = text_of(head)
            yield make_paragraph(text, title, spans, f"{paper_id} body p[{index}]", sec_number=number,
                                 headings=(title, own) if own and own != title else ())


def _body_paragraphs(body: ET.Element) -> Iterator[tuple[ET.Element, ET.Element | None]]:
    """``(<p>, the <head> of its div or None)`` in document order."""
    for paragraph, divs in nested(body, "p", "div"):
        yield paragraph, divs[-1].find("t:head", NS) if divs else None


def _numbered_titles(body: ET.Element) -> dict[str, str]:
    """Section number -> title, the first head of each number."""
    titles: dict[str, str] = {}
    for head in body.iter(f"{{{TEI}}}head"):
        if number := _number(head):
            titles.setdefault(number, text_of(head))
    return titles


def _section(head: ET.Element | None, titles: dict[str, str]) -> tuple[str, str | None]:
    """A paragraph's top-level section title and its own section number."""
    if head is None:
        return "", None
    number = _number(head)
    if number and "." in number:
        return titles.get(number.split(".")[0]) or text_of(head), number
    return text_of(head), number


def _number(head: ET.Element) -> str | None:
    return (head.get("n") or "").strip().rstrip(".") or None


def _classify(element: ET.Element) -> Markup | None:
    name = local_name(element)
    if name == "ref":
        target = (element.get("target") or "").strip().lstrip("#") or None
        kind = element.get("type") or ""
        return Markup(SPAN, CITE if kind == "bibr" else _REF_KINDS.get(kind, kind or "other"), target)
    if name == "formula":
        return Markup(PLACEHOLDER, "formula", element.get(XML_ID))
    if name in _SKIPPED:
        return Markup(SKIP)
    return Markup(BLOCK) if name == "lb" else None


def _bib_entries(root: ET.Element) -> dict[str, BibEntry]:
    entries = {}
    for bibl in root.iterfind(".//t:listBibl/t:biblStruct", NS):
        ref_id = bibl.get(XML_ID)
        if not ref_id:
            continue
        title = text_of(bibl.find("t:analytic/t:title", NS)) or text_of(bibl.find("t:monogr/t:title", NS))
        date = bibl.find("t:monogr/t:imprint/t:date", NS)
        authors = bibl.findall("t:analytic/t:author/t:persName/t:surname", NS) or \
            bibl.findall("t:monogr/t:author/t:persName/t:surname", NS)
        ids = _ids(bibl)
        entries[ref_id] = BibEntry(
            ref_id=ref_id,
            title=one_line(title),
            year=parse_year(date.get("when") or text_of(date)) if date is not None else None,
            raw=one_line(text_of(bibl.find("t:note[@type='raw_reference']", NS))),
            link=ids.get("doi"),
            authors=tuple(name for surname in authors if (name := text_of(surname))),
            ids=ids,
            # the monograph's title is the venue of an analytic (article, chapter) title
            venue=one_line(text_of(bibl.find("t:monogr/t:title", NS)))
            if bibl.find("t:analytic/t:title", NS) is not None else None,
        )
    return entries
