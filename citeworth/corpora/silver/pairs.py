"""Citing sentences and cited sentences: the two sides of every pair.

A paper's sentences come from its stored body (``citeworth.corpora.paper_index``), split by the
curation's splitter, with citations never split from their sentence and removed from its text as
curation removes them. A citing sentence is one whose citations are all resolved to bibliography
entries and cite 1 to ``max_citations`` distinct papers; the cited paper's sentences are its full
text, else its abstract.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from citeworth.core.paper import CitationSpan
from citeworth.corpora.paper_index import IndexedPaper
from citeworth.text.citations import normalize_space, remove_citations, trimmed
from citeworth.text.sentences import Bounds, attach_citation_only, join_across

Splitter = Callable[[Iterable[str]], Iterator[list[Bounds]]]
FULL_TEXT, ABSTRACT = "full_text", "abstract"


@dataclass(frozen=True)
class Sentence:
    text: str  # citations removed, spacing normalised
    # the entries each citation marker cites (None, or none at all: unlinked)
    markers: tuple[tuple[str | None, ...], ...] = ()


def body_sentences(body: Sequence[list], split: Splitter) -> Iterator[Sentence]:
    """Every sentence of a stored body (``[text, [[start, end, [ref ids]], ...]]`` per paragraph)."""
    for (text, spans), bounds in zip(body, split(paragraph[0] for paragraph in body), strict=True):
        cites = sorted((trimmed(text, CitationSpan(start, end, text[start:end], cites=tuple(ids)))
                        for start, end, ids in spans), key=lambda cite: cite.start)
        offsets = [(cite.start, cite.end) for cite in cites]
        position = 0
        for start, end in attach_citation_only(text, join_across(bounds, offsets), offsets):
            inside = []
            while position < len(cites) and cites[position].start < end:
                inside.append(cites[position])
                position += 1
            cleaned = normalize_space(remove_citations(text, start, end, inside))
            if cleaned:
                yield Sentence(cleaned, tuple(cite.ref_ids for cite in inside))


def cited_sentences(paper: IndexedPaper, split: Splitter) -> tuple[str, list[Sentence]]:
    """(FULL_TEXT or ABSTRACT, the sentences): the body when the paper has one, else its abstract."""
    if paper.full_text:
        return FULL_TEXT, list(body_sentences(paper.body, split))
    return ABSTRACT, list(body_sentences([[paper.abstract, []]], split))


def cited_entries(sentence: Sentence, bibliography: dict | None,
                  max_citations: int) -> tuple[list[str], str | None]:
    """(the distinct entries a citing sentence cites, None), or ([], why it is no citing sentence):
    "no_citation", "unresolved_citation" (a marker linked to no entry of the bibliography) or
    "too_many_citations"."""
    if not sentence.markers:
        return [], "no_citation"
    bibliography = bibliography or {}
    ids = [ref_id for marker in sentence.markers for ref_id in (marker or (None,))]
    if any(ref_id not in bibliography for ref_id in ids):
        return [], "unresolved_citation"
    distinct = list(dict.fromkeys(ids))
    if len(distinct) > max_citations:
        return [], "too_many_citations"
    return distinct, None


def dataset_sentence(sample: dict) -> Sentence:
    """A curated sample as a Sentence: its text (citations already removed) and its markers' ids."""
    return Sentence(sample["text"], tuple(tuple(marker) for marker in sample.get("ref_ids") or ()))
