"""unarXive (2022+ format, ``arXiv_src_<yymm>_<n>.jsonl``): one arXiv paper per line.

Citations are ``{{cite:ID}}`` placeholders with ``cite_spans``; formulas, figures and tables are
``{{formula:ID}}``-style placeholders with ``ref_spans``. A placeholder the spans miss is still
turned into a span, so none reaches curation as plain text. A paragraph's section is the title of
its top-level section (see ``top_level_sections``): by number when ``sec_number`` is dotted ("2.1"
-> the section numbered "2"), else the ``section`` block it follows in the document, since many
papers number subsections "1", "2", ... again inside each section. The paper's ids are its arXiv id
(and DOI); bibliography entries keep the raw reference and the ids unarXive matched (no title or
authors: unarXive does not parse references).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources.base import BadRecord, RecordError, Shard
from citeworth.sources.facts import (
    first_present,
    identifiers,
    new_paper,
    one_line,
    paper_id_of,
    parse_year,
    unique,
)
from citeworth.sources.lines import iter_papers
from citeworth.sources.spans import CITE, RawSpan, make_paragraph, place, raw_span

DEFAULT_RELEASE = "2023-sample"
PLACEHOLDER = re.compile(r"\{\{(\w+):([^{}\s]+)\}\}")
_YEAR_IN_DATE = re.compile(r"\b([12]\d{3})\b")


def read(shard: Shard) -> Iterator[Paper | BadRecord]:
    yield from iter_papers(shard, lambda record: paper_from_record(record, shard))


def paper_from_record(record: dict, shard: Shard) -> Paper:
    paper_id = paper_id_of(record)
    meta = _required(record, "metadata", dict, paper_id)
    body = _required(record, "body_text", list, paper_id)
    ref_entries = record.get("ref_entries") or {}
    bib_entries = _bib_entries(record.get("bib_entries") or {})
    if not all(isinstance(block, dict) for block in body):
        raise RecordError("bad_type:body_text", f"{paper_id}: a body_text block is not an object")
    paragraphs = [
        _paragraph(block, section, ref_entries, f"{paper_id} body_text[{index}]")
        for index, (block, section) in enumerate(zip(body, top_level_sections(body), strict=True))
        if block.get("content_type") == "paragraph"
    ]
    return new_paper(
        shard,
        paper_id=paper_id,
        title=one_line(meta.get("title")),
        fields_of_study=unique((meta.get("categories") or "").split()),  # the primary category first
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        abstract=_abstract_text(record) or one_line(meta.get("abstract")),
        ids=[("arxiv", paper_id), ("doi", meta.get("doi"))],
        authors=arxiv_authors(meta),
        field_scheme="arxiv",
        has_ref_entries=bool(ref_entries),
        venue_id=first_present(meta.get("journal-ref"), paper_id),
        year=arxiv_year(meta),
    )


def arxiv_authors(meta: dict) -> tuple[str, ...]:
    """"First Last" from arXiv metadata's ``authors_parsed`` ([last, first, suffix] lists)."""
    parsed = meta.get("authors_parsed") if isinstance(meta.get("authors_parsed"), list) else []
    names = (one_line(" ".join(str(p) for p in (a[1], a[0]) if p)) for a in parsed
             if isinstance(a, list) and len(a) >= 2)
    return tuple(name for name in names if name)


def top_level_sections(body: list[dict]) -> list[str]:
    """The top-level section title of every body block, in order.

    A block of a ``section`` is its own top level. A dotted number names its section ("2.1" ->
    "2"). Otherwise the block belongs to the ``section`` block before it -- unless the section
    numbers jump across it ("5", then subsections, then "7"): then its section ("6") held no
    paragraph of its own, its title is not in the data, and the block keeps its own title.
    A section with no paragraph of its own is likewise unknown for a dotted number.
    """
    sections = [i for i, block in enumerate(body) if block.get("sec_type") == "section"]
    by_number: dict[str, str] = {}
    for i in sections:
        if _number(body[i]) not in ("", "-1"):
            by_number.setdefault(_number(body[i]), _title(body[i]))
    titles = []
    for i, block in enumerate(body):
        before = bisect.bisect_right(sections, i) - 1
        enclosing = body[sections[before]] if before >= 0 else None
        following = body[sections[before + 1]] if before + 1 < len(sections) else None
        if block.get("sec_type") == "section" or enclosing is None:
            titles.append(_title(block))
        elif "." in _number(block):
            titles.append(by_number.get(_number(block).split(".")[0]) or _title(block))
        elif _skips_a_section(enclosing, following):
            titles.append(_title(block))
        else:
            titles.append(_title(enclosing))
    return titles


def _skips_a_section(before: dict, after: dict | None) -> bool:
    numbers = _number(before), _number(after) if after else ""
    return all(n.isdigit() for n in numbers) and int(numbers[1]) > int(numbers[0]) + 1


def _title(block: dict) -> str:
    return block.get("section") or ""


def _number(block: dict) -> str:
    return str(block.get("sec_number") or "").strip()


def _paragraph(block: dict, section: str, ref_entries: dict, where: str) -> Paragraph:
    text = block.get("text")
    if not isinstance(text, str):
        raise RecordError("missing_key:text", f"{where} has no text")
    spans = [raw_span(item, CITE, where) for item in _list(block, "cite_spans", where)]
    spans += [_ref_span(item, ref_entries, where) for item in _list(block, "ref_spans", where)]
    placed = place(text, spans, where)
    placed += _unspanned_placeholders(text, placed)
    own = _title(block)
    return make_paragraph(text, section, placed, where, sec_number=_number(block) or None,
                          headings=(section, own) if own and own != section else ())


def _ref_span(item: dict, ref_entries: dict, where: str) -> RawSpan:
    span = raw_span(item, "ref", where)
    match = PLACEHOLDER.fullmatch(span.text or "")
    entry = ref_entries.get(span.ref_id) if span.ref_id else None
    kind = match.group(1) if match else (entry or {}).get("type") or "other"
    return span._replace(kind=kind)


def _unspanned_placeholders(text: str, spans: list[RawSpan]) -> list[RawSpan]:
    covered = [(span.start, span.end) for span in spans]
    extra = []
    for match in PLACEHOLDER.finditer(text):
        if not any(start < match.end() and match.start() < end for start, end in covered):
            kind = CITE if match.group(1) == "cite" else match.group(1)
            extra.append(RawSpan(match.start(), match.end(), kind, match.group(0), match.group(2)))
    return extra


def _bib_entries(entries: dict) -> dict[str, BibEntry]:
    if not isinstance(entries, dict):
        raise RecordError("bad_type:bib_entries", f"bib_entries is {type(entries).__name__}, not an object")
    result = {}
    for key, entry in entries.items():
        entry = entry if isinstance(entry, dict) else {}
        ids = entry.get("ids") if isinstance(entry.get("ids"), dict) else {}
        link = first_present(ids.get("arxiv_id"), ids.get("doi"), ids.get("open_alex_id"))
        result[str(key)] = BibEntry(ref_id=str(key), raw=entry.get("bib_entry_raw"), link=link,
                                    ids=identifiers(ids.items()))
    return result


def _abstract_text(record: dict) -> str | None:
    abstract = record.get("abstract")
    return one_line(abstract.get("text") if isinstance(abstract, dict) else abstract)


def arxiv_year(meta: dict) -> int | None:
    """Year of the first version (the submission), else of the last metadata update."""
    versions = meta.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        if match := _YEAR_IN_DATE.search(str(versions[0].get("created") or "")):
            return int(match.group(1))
    return parse_year(meta.get("update_date"))


def _required(record: dict, key: str, kind: type, paper_id: str):
    if key not in record or record[key] is None:
        raise RecordError(f"missing_key:{key}", f"{paper_id} has no {key}")
    if not isinstance(record[key], kind):
        raise RecordError(f"bad_type:{key}", f"{paper_id}: {key} is {type(record[key]).__name__}")
    return record[key]


def _list(block: dict, key: str, where: str) -> list:
    value = block.get(key) or []
    if not isinstance(value, list):
        raise RecordError(f"bad_type:{key}", f"{where}: {key} is {type(value).__name__}, not a list")
    return value
