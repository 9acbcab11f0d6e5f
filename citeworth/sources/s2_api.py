"""Semantic Scholar datasets API ``s2orc`` records (today's S2ORC), one paper per JSON line.

A record is ``{"corpusid", "externalids", "content": {"source", "text", "annotations"}}``: the
whole paper is one string and every structure is a list of ``{start, end, attributes?}`` offsets
into it, under ``annotations.paragraph``, ``sectionheader`` (``attributes.n`` = its number),
``bibref`` (``attributes.ref_id`` -> a ``bibentry``'s ``attributes.id``), ``bibentry``
(``attributes.matched_paper_id`` = the cited corpus id), ``figureref``, ``tableref``, ``formula``...
Each annotation value may be a JSON string (the dumps), an already parsed list, or null.
A paragraph's section is the last section header before it; the abstract is the text of the
``abstract`` annotations, the paper's ids its ``externalids`` and corpus id. Citations must lie
inside their paragraph; a figure/table/formula annotation running past a paragraph's end is cut at
it (GROBID formulas are blocks of their own and may touch a paragraph).

Fields of study come from the ``papers`` dataset, given as the shard's metadata JSONL(.gz) keyed
by corpusid. Only the rows of the shard's own papers are kept: a first pass reads the shard's
corpus ids off the raw lines (a regex, no JSON parsing), so memory follows the shard, not the
(much larger) papers file.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources.base import BadRecord, RecordError, Shard
from citeworth.sources.facts import (
    PaperFacts,
    first_present,
    lower_keys,
    new_paper,
    one_line,
    s2_corpus_id,
    s2_ids,
    s2_papers_facts,
    shard_facts,
)
from citeworth.sources.lines import BrokenStream, decode_json_value, iter_lines, iter_papers
from citeworth.sources.spans import CITE, RawSpan, make_paragraph, offset

# A top-level "corpusid" key: inside the paper text or the annotation strings it would be escaped.
_CORPUS_ID = re.compile(rb'(?<!\\)"corpus[iI]d"\s*:\s*"?(\d+)')
# Annotations that mark text inside paragraphs, and the span kind each becomes.
_INLINE_KINDS = {"bibref": CITE, "figureref": "figure", "tableref": "table", "formula": "formula"}


@dataclass(frozen=True, slots=True)
class Annotation:
    start: int
    end: int
    attributes: dict = field(default_factory=dict)


def read(shard: Shard) -> Iterator[Paper | BadRecord]:
    facts = yield from shard_facts(shard, s2_corpus_id, s2_papers_facts, lambda: corpus_ids(shard.paths))
    if facts is None:
        return
    yield from iter_papers(
        shard, lambda record: paper_from_record(record, facts.get(s2_corpus_id(record)), shard))


def corpus_ids(paths: tuple[str, ...]) -> set[str]:
    """Corpus ids of the shard's records, read off the raw lines (a broken tail is reported later,
    by the pass that reads the records)."""
    ids = set()
    for path in paths:
        try:
            for line in iter_lines(path):
                if match := _CORPUS_ID.search(line.data):
                    ids.add(match.group(1).decode())
        except BrokenStream:
            pass
    return ids


def paper_from_record(record: dict, facts: PaperFacts | None, shard: Shard) -> Paper:
    corpus_id = s2_corpus_id(record)
    content = record.get("content")
    if not isinstance(content, dict):
        raise RecordError("missing_key:content", f"corpus id {corpus_id} has no content")
    text = content.get("text")
    if not isinstance(text, str):
        raise RecordError("missing_key:text", f"corpus id {corpus_id} has no content.text")
    annotations = content.get("annotations") or {}
    if not isinstance(annotations, dict):
        raise RecordError("bad_type:annotations", f"corpus id {corpus_id}: annotations is not an object")
    spans = _Annotations(annotations, text, corpus_id)
    bib_entries, matched_ids = _bib_entries(spans.get("bibentry"), text)
    paragraphs = _paragraphs(spans, text, matched_ids, corpus_id)
    ids = lower_keys(record.get("externalids") or record.get("externalIds"))
    titles = spans.get("title")
    return new_paper(
        shard,
        paper_id=corpus_id,
        title=one_line(text[titles[0].start:titles[0].end]) if titles else None,
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        abstract=one_line(" ".join(text[a.start:a.end] for a in spans.get("abstract"))),
        ids=s2_ids(record).items(),
        field_scheme="s2",
        has_ref_entries=_has_figures_or_tables(spans),
        venue_id=first_present(ids.get("arxiv"), ids.get("acl"), ids.get("pubmed"), ids.get("pubmedcentral")),
        year=None,
        row=facts,
    )


def _has_figures_or_tables(spans: _Annotations) -> bool:
    """Figures/tables parsed (or at least referred to, when the dump leaves their blocks out)."""
    return any(spans.get(name) for name in ("figure", "table", "figureref", "tableref"))


class _Annotations:
    """The record's annotation lists, parsed and range-checked on first use, sorted by offset."""

    def __init__(self, raw: dict, text: str, corpus_id: str):
        self._raw, self._text, self._where = raw, text, f"corpus id {corpus_id}"
        self._parsed: dict[str, list[Annotation]] = {}

    def get(self, name: str) -> list[Annotation]:
        if name not in self._parsed:
            self._parsed[name] = self._parse(name)
        return self._parsed[name]

    def _parse(self, name: str) -> list[Annotation]:
        value = self._raw.get(name)
        where = f"{self._where} annotations.{name}"
        if isinstance(value, str):
            value = decode_json_value(value, where)
        if value is None:
            return []
        if not isinstance(value, list):
            raise RecordError(f"bad_type:{name}", f"{where} is {type(value).__name__}, not a list")
        return sorted((self._annotation(item, where) for item in value), key=lambda a: (a.start, a.end))

    def _annotation(self, item, where: str) -> Annotation:
        if not isinstance(item, dict):
            raise RecordError("bad_type:annotation", f"{where}: {item!r} is not an object")
        for key in ("start", "end"):
            if key not in item:
                raise RecordError(f"missing_key:{key}", f"{where}: {item!r} has no {key!r}")
        start, end = offset(item["start"], "start", where), offset(item["end"], "end", where)
        if not 0 <= start <= end <= len(self._text):
            raise RecordError("span_out_of_range", f"{where}: [{start}, {end}) outside text of "
                                                   f"length {len(self._text)}")
        attributes = item.get("attributes")
        return Annotation(start, end, attributes if isinstance(attributes, dict) else {})


def _bib_entries(entries: list[Annotation], text: str) -> tuple[dict[str, BibEntry], dict[str, str]]:
    """Bibliography by entry id, and entry id by matched corpus id (for bibrefs that only carry
    ``matched_paper_id``)."""
    result, by_matched = {}, {}
    for entry in entries:
        attrs = entry.attributes
        matched = first_present(attrs.get("matched_paper_id"))
        ref_id = first_present(attrs.get("id"), attrs.get("ref_id"), matched)
        if ref_id is None:
            continue
        raw = one_line(text[entry.start:entry.end])
        result.setdefault(ref_id, BibEntry(ref_id=ref_id, raw=raw, link=matched))
        if matched:
            by_matched.setdefault(matched, ref_id)
    return result, by_matched


def _paragraphs(
    spans: _Annotations, text: str, matched_ids: dict[str, str], corpus_id: str
) -> list[Paragraph]:
    blocks = [a for a in spans.get("paragraph") if a.end > a.start]
    for before, after in itertools.pairwise(blocks):
        if after.start < before.end:
            raise RecordError("overlapping_spans", f"corpus id {corpus_id}: paragraph [{before.start}, "
                                                   f"{before.end}) overlaps [{after.start}, {after.end})")
    headers = _Sorted(spans.get("sectionheader"))
    inline = {_INLINE_KINDS[name]: _Sorted(spans.get(name)) for name in _INLINE_KINDS}
    paragraphs = []
    for index, block in enumerate(blocks):
        where = f"corpus id {corpus_id} paragraph {index}"
        header = headers.last_before(block.start)
        section = (one_line(text[header.start:header.end]) or "") if header else ""
        number = first_present(header.attributes.get("n")) if header else None
        block_spans = [span for kind, annotations in inline.items()
                       for span in _inside(block, annotations, kind, matched_ids, where)]
        paragraphs.append(make_paragraph(text[block.start:block.end], section, block_spans, where, number))
    return paragraphs


class _Sorted:
    """Annotations sorted by start, with the starts kept for bisection."""

    def __init__(self, annotations: list[Annotation]):
        self.items = annotations
        self.starts = [a.start for a in annotations]

    def last_before(self, position: int) -> Annotation | None:
        index = bisect.bisect_left(self.starts, position)
        return self.items[index - 1] if index else None

    def starting_in(self, start: int, end: int) -> list[Annotation]:
        return self.items[bisect.bisect_left(self.starts, start):bisect.bisect_left(self.starts, end)]


def _inside(block: Annotation, annotations: _Sorted, kind: str, matched_ids: dict[str, str],
            where: str) -> list[RawSpan]:
    """The annotations starting inside ``block``, as spans relative to it."""
    result = []
    for annotation in annotations.starting_in(block.start, block.end):
        if annotation.end > block.end and kind == CITE:
            raise RecordError("span_out_of_range", f"{where}: {kind} [{annotation.start}, {annotation.end}) "
                                                   f"runs past the paragraph's end {block.end}")
        end = min(annotation.end, block.end)
        result.append(RawSpan(annotation.start - block.start, end - block.start, kind,
                              ref_id=_ref_id(annotation.attributes, matched_ids)))
    return result


def _ref_id(attributes: dict, matched_ids: dict[str, str]) -> str | None:
    if (ref_id := first_present(attributes.get("ref_id"))) is not None:
        return ref_id
    matched = first_present(attributes.get("matched_paper_id"))
    return matched_ids.get(matched, matched) if matched else None
