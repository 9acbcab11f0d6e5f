"""S2ORC papers in the JSON of the 2019-09-28, 2020-07-05 and 2021-01-01 releases.

Three layouts of one schema:

- 20190928: ``{paper_id, metadata{title, year, venue ids...}, grobid_parse{abstract, body_text,
  ref_entries, bib_entries}, latex_parse}``. The PDF (GROBID) parse is read, as CiteWorth read PDF
  parses; the LaTeX parse only when there is no PDF parse.
- 20200705: flat ``{paper_id, abstract, body_text, bib_entries, ref_entries}``, metadata separate
  (the same layout as the lines of the legacy ``pdf_parses_N.jsonl.gz``; see s2orc_legacy.py).
- 20210101: flat, with a small ``metadata{title, authors, year}``.

One release folder of single-paper files is one shard. An optional metadata JSONL in the
20200705 metadata format (keyed by ``paper_id``) supplies MAG fields and the filter facts. The
abstract comes from the parse; authors and ids from the file's ``metadata`` (a numeric ``paper_id``
is the Semantic Scholar corpus id); bibliography entries carry author surnames, ``other_ids`` and
their ``link`` (the cited paper's corpus id). Citation spans without a link are resolved by
text/anchors.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources.base import BadRecord, RecordError, Shard, guarded
from citeworth.sources.facts import (
    VENUE_KEYS,
    PaperFacts,
    first_present,
    identifiers,
    new_paper,
    one_line,
    paper_id_of,
    parse_year,
    s2orc_authors,
    s2orc_ids,
    s2orc_row_facts,
    shard_facts,
)
from citeworth.sources.lines import decode_json
from citeworth.sources.spans import CITE, RawSpan, make_paragraph, raw_span
from citeworth.text.anchors import resolve_citations

# The paper id a single-paper file declares (its first unescaped "paper_id" key), found without
# parsing the file.
_PAPER_ID = re.compile(rb'(?<!\\)"paper_id"\s*:\s*"?([^",}\s]+)')
_REF_PREFIX_KINDS = {"FIGREF": "figure", "TABREF": "table", "EQREF": "formula", "SECREF": "section"}
# Unresolved references (ref_id null) named by their surface text: "(Figure 3", "Table 2", "Eq. 4".
_REF_WORDS = re.compile(r"^\W*(fig|tab|eq)", re.IGNORECASE)
_REF_WORD_KINDS = {"fig": "figure", "tab": "table", "eq": "formula"}


def read(shard: Shard) -> Iterator[Paper | BadRecord]:
    facts = yield from shard_facts(shard, paper_id_of, s2orc_row_facts, lambda: _declared_ids(shard.paths))
    if facts is None:
        return
    for path in shard.paths:
        data = Path(path).read_bytes()
        location = f"file {Path(path).name}"
        yield guarded(shard, location, data, _paper_from_file, data, location, facts, shard)


def _paper_from_file(data: bytes, location: str, facts: dict[str, PaperFacts], shard: Shard) -> Paper:
    record = decode_json(data, location)
    return paper_from_s2orc(record, facts.get(str(record.get("paper_id"))), shard)


def _declared_ids(paths: tuple[str, ...]) -> set[str]:
    """The paper ids the shard's files declare, so only their metadata rows are kept."""
    ids = set()
    for path in paths:
        if match := _PAPER_ID.search(Path(path).read_bytes()):
            ids.add(match.group(1).decode("utf-8", errors="replace"))
    return ids


def paper_from_s2orc(record: dict, facts: PaperFacts | None, shard: Shard) -> Paper:
    """A Paper from one S2ORC JSON record (any of the three layouts) and its metadata row."""
    paper_id = paper_id_of(record)
    parse, file_meta = _parse_and_metadata(record, paper_id)
    body = parse.get("body_text")
    if not isinstance(body, list):
        raise RecordError("missing_key:body_text", f"{paper_id} has no body_text list")
    ref_entries = parse.get("ref_entries") or {}
    bib_entries = _bib_entries(parse.get("bib_entries") or {}, paper_id)
    paragraphs = resolve_citations([_paragraph(block, ref_entries, paper_id, index)
                                    for index, block in enumerate(body)], bib_entries)
    abstract = _abstract(parse.get("abstract"))
    return new_paper(
        shard,
        paper_id=paper_id,
        title=one_line(file_meta.get("title")),
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        abstract=abstract,
        ids=s2orc_ids({**file_meta, "paper_id": paper_id}).items(),
        authors=s2orc_authors(file_meta),
        field_scheme="mag",
        has_ref_entries=bool(ref_entries),
        venue_id=first_present(*(file_meta.get(key) for key in VENUE_KEYS)),
        year=parse_year(file_meta.get("year")),
        row=facts,
    )


def _abstract(value) -> str | None:
    """The abstract's text: a string, or a list of ``{"text": ...}`` paragraphs."""
    if isinstance(value, list):
        value = " ".join(block["text"] for block in value if isinstance(block, dict)
                         and isinstance(block.get("text"), str))
    return one_line(value)


def _parse_and_metadata(record: dict, paper_id: str) -> tuple[dict, dict]:
    file_meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    if "grobid_parse" in record or "latex_parse" in record:
        parse = record.get("grobid_parse") or record.get("latex_parse")
        if not isinstance(parse, dict):
            raise RecordError("missing_key:grobid_parse", f"{paper_id} has neither a PDF nor a LaTeX parse")
        return parse, file_meta
    return record, file_meta


def _paragraph(block: dict, ref_entries: dict, paper_id: str, index: int) -> Paragraph:
    if isinstance(block, dict) and _without_spans(block):  # most paragraphs: nothing more to check
        sec_number = block.get("sec_num")
        return Paragraph(text=block["text"], section=_section(block),
                         sec_number=None if sec_number is None else first_present(sec_number))
    where = f"{paper_id} body_text[{index}]"
    if not isinstance(block, dict):
        raise RecordError("bad_type:body_text", f"{where} is {type(block).__name__}, not an object")
    for key in ("text", "cite_spans"):
        if key not in block:
            raise RecordError(f"missing_key:{key}", f"{where} has no {key}")
    spans = [raw_span(item, CITE, where) for item in _spans(block, "cite_spans", where)]
    spans += [_ref_span(item, ref_entries, where) for item in _spans(block, "ref_spans", where)]
    spans += [raw_span(item, "formula", where) for item in _spans(block, "eq_spans", where)]
    number = first_present(block.get("sec_num"))
    return make_paragraph(block["text"], _section(block), spans, where, sec_number=number)


def _without_spans(block: dict) -> bool:
    """A well-formed block with no spans of any kind (an absent or empty list, or null)."""
    return "cite_spans" in block and isinstance(block.get("text"), str) and \
        not (block["cite_spans"] or block.get("ref_spans") or block.get("eq_spans"))


def _section(block: dict) -> str:
    section = block.get("section")
    return section if isinstance(section, str) else ""


def _ref_span(item: dict, ref_entries: dict, where: str) -> RawSpan:
    span = raw_span(item, "ref", where)
    entry = ref_entries.get(span.ref_id) if span.ref_id and isinstance(ref_entries, dict) else None
    kind = entry.get("type") if isinstance(entry, dict) else None
    if not kind:
        prefix = re.sub(r"\d+$", "", span.ref_id or "")
        words = _REF_WORDS.match(span.text or "")
        by_word = _REF_WORD_KINDS[words.group(1).lower()] if words else "other"
        kind = _REF_PREFIX_KINDS.get(prefix) or by_word
    return RawSpan(span.start, span.end, kind, span.text, span.ref_id)  # not _replace: slow


def _spans(block: dict, key: str, where: str) -> list:
    value = block.get(key) or []
    if not isinstance(value, list):
        raise RecordError(f"bad_type:{key}", f"{where}: {key} is {type(value).__name__}, not a list")
    return value


def _bib_entries(entries: dict, paper_id: str) -> dict[str, BibEntry]:
    if not isinstance(entries, dict):
        raise RecordError("bad_type:bib_entries", f"{paper_id}: bib_entries is {type(entries).__name__}")
    result = {}
    for key, entry in entries.items():
        entry = entry if isinstance(entry, dict) else {}
        link = first_present(entry.get("link"), entry.get("links"))
        other_ids = entry.get("other_ids") if isinstance(entry.get("other_ids"), dict) else {}
        authors = entry.get("authors") if isinstance(entry.get("authors"), list) else []
        result[str(key)] = BibEntry(
            ref_id=str(key),
            title=one_line(entry.get("title")),
            year=parse_year(entry.get("year")),
            link=link,
            authors=tuple(a["last"].strip() for a in authors
                          if isinstance(a, dict) and isinstance(a.get("last"), str) and a["last"].strip()),
            ids=identifiers([*other_ids.items(), ("s2", link if link and link.isdigit() else None)]),
            venue=one_line(entry.get("venue")),
        )
    return result
