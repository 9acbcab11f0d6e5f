"""One paper's related-work section as a record of Kobayashi et al.'s released format.

``Sentences`` are the section's sentences (split by the curation's splitter) with every citation
anchor replaced by ``%cite{[k]}%``; ``k`` is the cited paper's index in this record (1, 2, ... in
order of first mention), the key of ``CitedPaperTitle`` / ``CitedPaperText``, and the value listed
in ``CitedPaperIndexList``. A marker citing several papers ("[3, 4]", "[1]–[4]") is one anchor per
paper. An anchor no bibliography entry answers still gets an index (so the lists stay parallel)
but no title or abstract. ``CollectedCitedNumberList`` counts, per sentence, the cited papers whose
abstract was found (``fill_abstracts``).

Beyond their keys, a record keeps its provenance: ``paper_id``, ``source``, ``release`` and the
``section_title`` as printed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence

from citeworth.core.paper import CitationSpan, Paper
from citeworth.corpora.related_work.sections import Section, SectionFinder
from citeworth.text.anchors import Bibliography, printed_numbers, resolve_citations
from citeworth.text.sentences import Bounds, attach_citation_only, join_across

Splitter = Callable[[Iterable[str]], Iterator[list[Bounds]]]
CITED = "_cited"  # index -> the entry's ref id, title and ids, until the abstracts are filled in
_URL_OF = (("doi", "https://doi.org/{}"), ("arxiv", "https://arxiv.org/abs/{}"),
           ("pmcid", "https://www.ncbi.nlm.nih.gov/pmc/articles/{}/"),
           ("pmid", "https://pubmed.ncbi.nlm.nih.gov/{}/"), ("s2", "https://api.semanticscholar.org/CorpusID:{}"))
_SURFACE_STRIP = " \t,;:" + "-\u2010\u2011\u2012\u2013\u2014\u2212"


def cite_tag(index: str) -> str:
    return f"%cite{{[{index}]}}%"


def paper_url(ids: dict[str, str]) -> str:
    """A landing page from the paper's first identifier (DOI, arXiv, PMC, PubMed, S2), or ""."""
    return next((template.format(ids[kind]) for kind, template in _URL_OF if kind in ids), "")


class _Indexer:
    """Record-level indices of cited papers, in order of first mention."""

    def __init__(self, paper: Paper):
        self.paper = paper
        self.bibliography = Bibliography(paper.bib_entries, paper.paragraphs)
        self.indices: dict[tuple[str, str], str] = {}
        self.cited: dict[str, dict] = {}

    def anchors(self, span: CitationSpan) -> list[tuple[str, str]]:
        """``(index, surface)`` for each paper the marker cites."""
        surface = anchor_surface(span.text)
        ids = [ref_id for ref_id in span.ref_ids if ref_id in self.paper.bib_entries]
        if not ids:
            return [(self._index(("unmapped", surface)), surface)]
        numeric = bool(printed_numbers(span.text))
        found = []
        for ref_id in ids:
            number = self.bibliography.number_of(ref_id) if numeric else None
            index = self._index(("entry", ref_id))
            entry = self.paper.bib_entries[ref_id]
            self.cited.setdefault(index, {"ref_id": ref_id, "title": entry.title, "ids": dict(entry.ids)})
            found.append((index, f"[{number}]" if number else surface))
        return found

    def _index(self, key: tuple[str, str]) -> str:
        return self.indices.setdefault(key, str(len(self.indices) + 1))


def anchor_surface(text: str) -> str:
    """A marker's text without the separators and unmatched brackets it took from its neighbours
    ("[3," -> "3", "; Lee, 2011)" -> "Lee, 2011", "(Smith et al., 2010)" unchanged)."""
    text = text.strip(_SURFACE_STRIP)
    for opener, closer in ("()", "[]"):
        if text.startswith(opener) and text.count(opener) > text.count(closer):
            text = text[1:]
        if text.endswith(closer) and text.count(closer) > text.count(opener):
            text = text[:-1]
    return text.strip(_SURFACE_STRIP) or text


def paper_record(paper: Paper, finder: SectionFinder, split: Splitter) -> dict | None:
    """The record of the paper's related-work section (abstracts not yet filled in), or None when
    it has none. Citations are resolved first (text/anchors.py), whichever reader made the paper."""
    paper = dataclasses.replace(paper, paragraphs=resolve_citations(paper.paragraphs, paper.bib_entries))
    section = finder.find(paper.paragraphs)
    return build_record(paper, section, split) if section else None


def mapped_anchors(record: dict) -> int:
    """Anchors of a not yet filled-in record that map to a bibliography entry."""
    return sum(index in record[CITED] for indices in record["CitedPaperIndexList"] for index in indices)


def build_record(paper: Paper, section: Section, split: Splitter) -> dict:
    """The record of ``paper``'s related-work ``section`` (abstracts not yet filled in); the
    paper's citations must be resolved (text/anchors.py's resolve_citations)."""
    indexer = _Indexer(paper)
    sentences, anchors, indices = [], [], []
    paragraphs = section.paragraphs
    for paragraph, bounds in zip(paragraphs, split(p.text for p in paragraphs), strict=True):
        for text, sentence_anchors in _sentences(paragraph.text, paragraph.cite_spans, bounds, indexer):
            sentences.append(text)
            anchors.append([surface for _, surface in sentence_anchors])
            indices.append([index for index, _ in sentence_anchors])
    return {
        "paper_id": paper.paper_id,
        "source": paper.source,
        "release": paper.release,
        "section_title": section.title,
        "Title": paper.title or "",
        "Author": ", ".join(paper.authors),
        "URL": paper_url(paper.ids),
        "Sentences": sentences,
        "AnswersCitationWorthiness": [int(bool(found)) for found in indices],
        "CitedNumberList": [len(found) for found in indices],
        "CitationAnchorList": anchors,
        "CitedPaperIndexList": indices,
        "CitedPaperTitle": {i: entry["title"] for i, entry in indexer.cited.items() if entry["title"]},
        CITED: indexer.cited,
    }


def _sentences(text: str, spans: Sequence[CitationSpan], bounds: list[Bounds],
               indexer: _Indexer) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Each sentence's text with anchors tagged, and its anchors; a citation is never split from
    its sentence (the curation's joins)."""
    spans = sorted(spans, key=lambda span: span.start)
    offsets = [(span.start, span.end) for span in spans]
    bounds = attach_citation_only(text, join_across(bounds, offsets), offsets)
    position = 0
    for start, end in bounds:
        pieces, cursor, found = [], start, []
        while position < len(spans) and spans[position].start < end:
            span = spans[position]
            span_anchors = indexer.anchors(span)
            pieces += [text[cursor:span.start], "".join(cite_tag(index) for index, _ in span_anchors)]
            found += span_anchors
            cursor = max(cursor, span.end)
            position += 1
        pieces.append(text[cursor:end])
        yield "".join(pieces), found


def fill_abstracts(record: dict, find: Callable[[dict], tuple[str | None, str | None] | None]) -> dict:
    """The finished record: ``find(cited)`` -> (title, abstract) of each mapped cited paper (or
    None); a title only fills one the bibliography lacks."""
    record = dict(record)
    cited = record.pop(CITED)
    titles, texts = dict(record["CitedPaperTitle"]), {}
    for index, entry in cited.items():
        found = find(entry)
        if found is None:
            continue
        title, abstract = found
        if title and index not in titles:
            titles[index] = title
        if abstract:
            texts[index] = abstract
    record["CitedPaperTitle"] = dict(sorted(titles.items(), key=lambda item: int(item[0])))
    record["CitedPaperText"] = dict(sorted(texts.items(), key=lambda item: int(item[0])))
    record["CollectedCitedNumberList"] = [len({i for i in indices if i in texts})
                                         for indices in record["CitedPaperIndexList"]]
    return record
