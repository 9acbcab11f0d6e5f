"""The stage's work file: citing sentences, cited papers' sentences and the distinct texts to
vectorise, in SQLite beside the output (memory stays flat however many pairs there are)."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import numpy as np

from citeworth.corpora.paper_index import IndexedPaper


@dataclass(frozen=True)
class Citing:
    citing_id: str
    split: str
    source: str
    paper_id: str
    original: str  # the sentence, citations removed
    text_row: int  # its cleaned text
    ref_id: str
    cited: int  # the cited paper's rowid in the paper index


@dataclass(frozen=True)
class CitedSentence:
    idx: int  # position among the cited paper's sentences
    original: str
    text_row: int


@dataclass(frozen=True)
class CitedPaper:
    source: str
    paper_id: str
    cited_from: str  # full_text | abstract
    sentences: tuple[CitedSentence, ...]

    @functools.cached_property
    def vector_rows(self) -> np.ndarray:
        """The rows of its sentences' vectors (text row - 1)."""
        return np.array([sentence.text_row - 1 for sentence in self.sentences], dtype=np.int64)


class Store:
    def __init__(self, path: Path):
        self.db = sqlite3.connect(path)
        self.db.executescript("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE texts (row INTEGER PRIMARY KEY, text TEXT UNIQUE);
            CREATE TABLE curated (source TEXT, paper_id TEXT, split TEXT, PRIMARY KEY (source, paper_id));
            CREATE TABLE citing (id TEXT, ref_id TEXT, split TEXT, source TEXT, paper_id TEXT, original TEXT,
                                 text_row INTEGER, cited INTEGER, PRIMARY KEY (id, ref_id));
            CREATE TABLE cited_papers (paper INTEGER PRIMARY KEY, source TEXT, paper_id TEXT,
                                       cited_from TEXT);
            CREATE TABLE cited (paper INTEGER, idx INTEGER, original TEXT, text_row INTEGER,
                                PRIMARY KEY (paper, idx));
        """)

    def text_row(self, text: str) -> int:
        """The row of a (cleaned) text: the same text always gets the same row."""
        self.db.execute("INSERT OR IGNORE INTO texts (text) VALUES (?)", (text,))
        return self.db.execute("SELECT row FROM texts WHERE text = ?", (text,)).fetchone()[0]

    def texts(self) -> list[str]:
        """Every text, row 1 first (vector row = text row - 1)."""
        return [text for (text,) in self.db.execute("SELECT text FROM texts ORDER BY row")]

    def add_curated(self, source: str, paper_id: str, split: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO curated VALUES (?, ?, ?)", (source, paper_id, split))

    def curated(self) -> Iterator[tuple[str, str, str]]:
        """(source, paper id, split) of each curated paper, in that order."""
        yield from self.db.execute("SELECT source, paper_id, split FROM curated ORDER BY source, paper_id")

    def add_citing(self, citing: Citing) -> None:
        self.db.execute("INSERT OR IGNORE INTO citing VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (citing.citing_id, citing.ref_id, citing.split, citing.source, citing.paper_id,
                         citing.original, citing.text_row, citing.cited))

    def citing_sentences(self) -> Iterator[list[Citing]]:
        """Each citing sentence's rows (one per cited paper), by sentence id then ref id."""
        rows = self.db.execute("SELECT id, split, source, paper_id, original, text_row, ref_id, cited "
                               "FROM citing ORDER BY id, ref_id")
        for _, group in groupby((Citing(*row) for row in rows), key=lambda citing: citing.citing_id):
            yield list(group)

    def cited_rowids(self) -> list[int]:
        return [row for (row,) in self.db.execute("SELECT DISTINCT cited FROM citing ORDER BY cited")]

    def add_cited(self, paper: IndexedPaper, cited_from: str,
                  sentences: list[tuple[int, str, int]]) -> None:
        """A cited paper and its sentences as (idx, original, text row)."""
        self.db.execute("INSERT INTO cited_papers VALUES (?, ?, ?, ?)",
                        (paper.rowid, paper.source, paper.paper_id, cited_from))
        self.db.executemany("INSERT INTO cited VALUES (?, ?, ?, ?)",
                            [(paper.rowid, *sentence) for sentence in sentences])

    @functools.lru_cache(maxsize=256)  # noqa: B019 (the store lives for one stage run)
    def cited_paper(self, rowid: int) -> CitedPaper:
        source, paper_id, cited_from = self.db.execute(
            "SELECT source, paper_id, cited_from FROM cited_papers WHERE paper = ?", (rowid,)).fetchone()
        sentences = tuple(CitedSentence(*row) for row in self.db.execute(
            "SELECT idx, original, text_row FROM cited WHERE paper = ? ORDER BY idx", (rowid,)))
        return CitedPaper(source, paper_id, cited_from, sentences)

    def close(self) -> None:
        self.db.close()
