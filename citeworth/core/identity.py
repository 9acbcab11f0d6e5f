"""One paper across sources: the keys a copy of a paper is known by, and copies grouped into papers.

A copy (one source's record of a paper) is known by its identifiers, as ``"<kind>:<value>"`` keys
(``doi:10.1186/1471-2180-11-174``, ``pmcid:PMC3166277``; kinds and spellings of
``core.paper.ID_KINDS`` / ``normalise_id``), and by a fallback key: a hash of its normalised title,
its first author's surname and its year (all three known, else none).

Two copies are linked when they share an identifier, or when they share the fallback key and have
no identifier kind in common (both without identifiers, or e.g. a GROBID parse with only a DOI and
an S2ORC record with only its corpus id): two copies with different DOIs are not linked, whatever
their titles. A paper is every copy so linked, directly or through others (``IdentityGroups``), so
a copy that contradicts neither of two such DOIs and shares their fallback key joins them (most
likely a preprint and its published version). The assemble stage keeps one copy of each paper; the
quality gate checks that no paper has copies in two splits. Both group with the same code, here.
"""

from __future__ import annotations

import hashlib
import itertools
import unicodedata
from array import array
from collections.abc import Iterable, Sequence
from operator import itemgetter

from citeworth.core.paper import Paper

FALLBACK = "fallback"  # the fallback key's kind in a key ("fallback:<hash>")
# Name parts after the surname that are not the surname ("Smith Jr.", "Henry Ford II").
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


def title_key(title: str | None) -> str:
    """The form titles are compared in: case-folded, whitespace collapsed, no final period."""
    return " ".join((title or "").casefold().split()).rstrip(" .")


def identifier_keys(ids: dict[str, str]) -> list[str]:
    """``kind:value`` of each identifier, in kind order."""
    return [f"{kind}:{value}" for kind, value in sorted(ids.items())]


def surname_key(name: str | None) -> str:
    """The surname of a name printed "Given Surname", case-folded, accents and punctuation dropped
    ("Adrián Pérez-Salinas" -> "perezsalinas"); "" when there is none."""
    words = [word for word in (name or "").split() if _plain(word) not in _SUFFIXES]
    return _plain(words[-1]) if words else ""


def _plain(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(char for char in decomposed if char.isalnum())


def fallback_key(title: str | None, authors: Sequence[str], year: int | None) -> str | None:
    """``fallback:<hash>`` of the normalised title, first author's surname and year; None unless
    all three are known (a title alone, "Introduction", names many papers)."""
    title, surname = title_key(title), surname_key(authors[0] if authors else None)
    if not (title and surname and year):
        return None
    digest = hashlib.sha256(f"{title}\n{surname}\n{year}".encode()).hexdigest()[:16]
    return f"{FALLBACK}:{digest}"


def copy_record(paper: Paper, paragraphs: int) -> dict:
    """A copy of a paper as curation records it beside its kept paragraphs (a line of the curated
    ``papers/<shard>.jsonl``): its ``paper_id``, ``source`` (reader), ``ids``, ``fallback`` key and
    ``title``, and how many of the shard's paragraph lines, from where the previous copy's end, are
    its."""
    return {"paper_id": paper.paper_id, "source": paper.source, "ids": dict(paper.ids), "title": paper.title,
            "fallback": fallback_key(paper.title, paper.authors, paper.metadata.get("year")),
            "paragraphs": paragraphs}


def copy_kinds(record: dict) -> str:
    """The identifier kinds of a copy record, space-separated in kind order (``link_fallbacks``)."""
    return " ".join(sorted(record["ids"]))


class IdentityGroups:
    """Copies numbered 0..n-1 grouped into papers (union-find): a group's root is its first copy.

    Memory: 8 bytes per copy (the parent array); the keys stream past in sorted order, so they may
    come from an on-disk index of any size."""

    def __init__(self, copies: int):
        self._parent = array("q", range(copies))

    def __len__(self) -> int:
        return len(self._parent)

    def root(self, copy: int) -> int:
        parent = self._parent
        while parent[copy] != copy:
            parent[copy] = parent[parent[copy]]  # path halving
            copy = parent[copy]
        return copy

    def union(self, a: int, b: int) -> None:
        a, b = self.root(a), self.root(b)
        if a != b:
            self._parent[max(a, b)] = min(a, b)

    def link_identifiers(self, pairs: Iterable[tuple[str, int]]) -> None:
        """``(identifier key, copy)`` pairs sorted by key: copies sharing a key are one paper."""
        for _, group in itertools.groupby(pairs, key=itemgetter(0)):
            first, *others = (copy for _, copy in group)
            for copy in others:
                self.union(first, copy)

    def link_fallbacks(self, rows: Iterable[tuple[str, int, str]]) -> None:
        """``(fallback key, copy, its identifier kinds space-separated)`` sorted by key: copies sharing
        a fallback key and no identifier kind are one paper."""
        for _, group in itertools.groupby(rows, key=itemgetter(0)):
            members = [(copy, frozenset(kinds.split())) for _, copy, kinds in group]
            for (a, kinds_a), (b, kinds_b) in itertools.combinations(members, 2):
                if not kinds_a & kinds_b:
                    self.union(a, b)


def group_copies(copies: Sequence[dict]) -> IdentityGroups:
    """Copy records (``copy_record``) held in memory, grouped into papers (their positions)."""
    groups = IdentityGroups(len(copies))
    groups.link_identifiers(sorted((key, number) for number, copy in enumerate(copies)
                                   for key in identifier_keys(copy["ids"])))
    groups.link_fallbacks(sorted((copy["fallback"], number, copy_kinds(copy))
                                 for number, copy in enumerate(copies) if copy["fallback"]))
    return groups
