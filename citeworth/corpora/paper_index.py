"""The corpus' papers in an on-disk index, findable by identifier or title: one index for every
dataset made from the readers' Papers.

``PaperIndex`` keeps each paper read (its source, id, title and abstract; with ``keep_text`` also
its body paragraphs, citations resolved, and its bibliography) in a SQLite file, under keys made of
its identifiers (DOI, arXiv, PubMed, PMC, S2 corpus id: ``doi:10.1/x``) and a hash of its
normalised title (``title:<16 hex>``), so memory stays flat however large the corpus (S2ORC).

A bibliography entry (``{"title", "ids"}``) finds its paper by the same keys:

- ``with_abstract``: the first paper read that has an abstract, trying the entry's identifiers in
  kind order, then its title (the related-work dataset's cited abstracts);
- ``best_content``: a paper with full text before one with only an abstract, then the same order
  (citation linkage needs the cited paper's sentences).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from citeworth.core.identity import identifier_keys, title_key
from citeworth.core.paper import Paper
from citeworth.text.anchors import resolve_citations

# A body paragraph as stored: [text, [[start, end, [ref ids]], ...]] (the citation spans).
StoredParagraph = list
_COLUMNS = "rowid, source, paper_id, title, abstract, body, bibliography"


def lookup_keys(ids: dict[str, str], title: str | None) -> list[str]:
    """Index keys of a paper or a bibliography entry: its identifiers in kind order, then its title."""
    keys = identifier_keys(ids)
    if normal := title_key(title):
        keys.append(f"title:{hashlib.sha256(normal.encode()).hexdigest()[:16]}")
    return keys


@dataclass(frozen=True)
class IndexedPaper:
    rowid: int  # reading order
    source: str
    paper_id: str
    title: str | None
    abstract: str | None
    body: list[StoredParagraph] | None  # None: not kept, or the paper has no body text
    bibliography: dict[str, dict] | None  # ref id -> {"title", "ids"}

    @property
    def full_text(self) -> bool:
        return bool(self.body)


class PaperIndex:
    """Papers by identifier and title in a SQLite file (the first paper read wins a tie)."""

    def __init__(self, path: Path, keep_text: bool = False):
        self.keep_text = keep_text
        self.db = sqlite3.connect(path)
        # A work file rebuilt from the inputs on every run: no journal needed.
        self.db.executescript("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE IF NOT EXISTS papers (rowid INTEGER PRIMARY KEY, source TEXT, paper_id TEXT,
                title TEXT, abstract TEXT, body TEXT, bibliography TEXT);
            CREATE TABLE IF NOT EXISTS keys (key TEXT, paper INTEGER);
            CREATE INDEX IF NOT EXISTS keys_by_key ON keys (key);
            CREATE INDEX IF NOT EXISTS papers_by_id ON papers (source, paper_id);
        """)

    def add(self, paper: Paper) -> None:
        body = bibliography = None
        if self.keep_text:
            body = _stored_body(paper) or None
            bibliography = {ref_id: {"title": entry.title, "ids": dict(entry.ids)}
                            for ref_id, entry in paper.bib_entries.items()}
        row = self.db.execute(
            "INSERT INTO papers (source, paper_id, title, abstract, body, bibliography) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (paper.source, paper.paper_id, paper.title, paper.abstract or None, _json(body),
             _json(bibliography)),
        ).lastrowid
        self.db.executemany("INSERT INTO keys VALUES (?, ?)",
                            [(key, row) for key in lookup_keys(paper.ids, paper.title)])

    def with_abstract(self, cited: dict) -> IndexedPaper | None:
        """The paper a bibliography entry names among those with an abstract: by its first key that
        one has, then reading order."""
        for key in lookup_keys(cited.get("ids") or {}, cited.get("title")):
            row = self.db.execute(
                f"SELECT {_prefixed('p')} FROM keys k JOIN papers p ON p.rowid = k.paper "
                "WHERE k.key = ? AND p.abstract IS NOT NULL ORDER BY p.rowid LIMIT 1", (key,)).fetchone()
            if row:
                return _paper(row)
        return None

    def best_content(self, cited: dict) -> IndexedPaper | None:
        """The paper a bibliography entry names with the most text: full text before an abstract
        alone, then by the entry's key order, then reading order; None if no such paper has either."""
        keys = lookup_keys(cited.get("ids") or {}, cited.get("title"))
        if not keys:
            return None
        rows = self.db.execute(
            f"SELECT k.key, {_prefixed('p')} FROM keys k JOIN papers p ON p.rowid = k.paper "
            f"WHERE k.key IN ({', '.join('?' * len(keys))}) "
            "AND (p.body IS NOT NULL OR p.abstract IS NOT NULL)",
            keys).fetchall()
        if not rows:
            return None
        best = min(rows, key=lambda row: (row[6] is None, keys.index(row[0]), row[1]))
        return _paper(best[1:])

    def paper(self, rowid: int) -> IndexedPaper:
        return _paper(self.db.execute(f"SELECT {_COLUMNS} FROM papers WHERE rowid = ?", (rowid,)).fetchone())

    def get(self, source: str, paper_id: str) -> IndexedPaper | None:
        """The first paper read with this source and id."""
        row = self.db.execute(f"SELECT {_COLUMNS} FROM papers WHERE source = ? AND paper_id = ? "
                              "ORDER BY rowid LIMIT 1", (source, paper_id)).fetchone()
        return _paper(row) if row else None

    def papers(self) -> list[IndexedPaper]:
        """Every paper, in reading order."""
        return [_paper(row) for row in self.db.execute(f"SELECT {_COLUMNS} FROM papers ORDER BY rowid")]

    def close(self) -> None:
        self.db.close()


def _json(value) -> str | None:
    return json.dumps(value, ensure_ascii=False) if value else None


def _prefixed(alias: str) -> str:
    return ", ".join(f"{alias}.{column.strip()}" for column in _COLUMNS.split(","))


def _paper(row: tuple) -> IndexedPaper:
    rowid, source, paper_id, title, abstract, body, bibliography = row
    return IndexedPaper(rowid, source, paper_id, title, abstract, body and json.loads(body),
                        bibliography and json.loads(bibliography))


def _stored_body(paper: Paper) -> list[StoredParagraph]:
    """The paper's paragraphs with their citation spans, citations resolved whichever reader read it."""
    paper = dataclasses.replace(paper, paragraphs=resolve_citations(paper.paragraphs, paper.bib_entries))
    return [[paragraph.text, [[span.start, span.end, list(span.ref_ids)] for span in paragraph.cite_spans]]
            for paragraph in paper.paragraphs if paragraph.text.strip()]
