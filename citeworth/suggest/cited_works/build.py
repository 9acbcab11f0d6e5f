"""The works stage's work file: the indexed papers' references resolved to works, with the sentences
that cite them, in SQLite beside the output (memory stays flat however large the corpus).

1. ``select``: the papers of the curated dataset's chosen splits (by reader, shard and id, the copy
   assemble kept; by reader and id for records without a shard), and their cite-worthy samples with
   the entries each cites (``ref_ids``).
2. ``add_paper``: each such paper as the readers read it again: its bibliography (one row per
   entry, with the entry's identifier keys and fallback key), and with ``contexts: full_text`` every
   sentence of its body that cites an entry (``suggest/contexts.py``).
3. ``works``: entries grouped into works by ``core/identity.py``'s rules (a shared identifier, else
   a shared fallback key and no identifier kind in common), the same grouping that makes one paper of
   several copies; each work's metadata is what most of its entries say, its citing papers counted,
   its contexts gathered. Works come out ordered by their identifier, so the index is the same
   bytes whichever order the inputs were read in.
4. ``citations``: which indexed paper, and which paragraph (``full_text`` contexts), cites which
   work: the co-citation evidence the ranker reads (``suggest/cocitation.py``); ``paper_texts``:
   each indexed paper's title and abstract (the papers like a draft).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeworth.core.identity import IdentityGroups, fallback_key, identifier_keys
from citeworth.core.io import read_jsonl
from citeworth.core.paper import ID_KINDS, Paper
from citeworth.core.schema import CITE_WORTHY
from citeworth.suggest.contexts import citing_sentences
from citeworth.text.anchors import resolve_citations

FULL_TEXT, DATASET = "full_text", "dataset"
CONTEXT_SOURCES = (FULL_TEXT, DATASET)


@dataclass(frozen=True)
class Work:
    """One cited work as the index stores it."""

    identifier: str  # its first identifier in kind order ("doi:10.1/x"), else its fallback key
    ids: dict[str, str]
    title: str | None
    authors: tuple[str, ...]  # surnames, first author first
    year: int | None
    venue: str | None
    cited_by: int  # distinct indexed papers citing it
    keys: tuple[str, ...]  # every identifier and fallback key its references were known by
    contexts: tuple[str, ...]  # the sentences citing it, in paper order, each once


class WorkFile:
    def __init__(self, path: Path):
        self.db = sqlite3.connect(path)
        self.db.executescript("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE papers (row INTEGER PRIMARY KEY, source TEXT, shard TEXT, paper_id TEXT, split TEXT,
                                 read INTEGER DEFAULT 0, about TEXT, UNIQUE (source, shard, paper_id));
            CREATE TABLE samples (sample INTEGER, paper INTEGER, ref_id TEXT, text TEXT);
            CREATE TABLE entries (row INTEGER PRIMARY KEY, paper INTEGER, ref_id TEXT, title TEXT,
                                  authors TEXT, year INTEGER, venue TEXT, ids TEXT, fallback TEXT,
                                  kinds TEXT);
            CREATE TABLE keys (key TEXT, entry INTEGER);
            CREATE TABLE contexts (entry INTEGER, text TEXT);
            CREATE TABLE paragraph_cites (paragraph INTEGER, entry INTEGER);
            CREATE TABLE roots (entry INTEGER PRIMARY KEY, root INTEGER);
        """)
        self.paragraphs = 0  # paragraphs of the full text read so far (their numbers)

    # -- 1. the papers to index ---------------------------------------------------------------------

    def select(self, data_dir: Path, splits: list[str], counts: Counter) -> None:
        """The papers of ``splits`` of the dataset at ``data_dir``, and their cite-worthy samples."""
        for split in splits:
            for record in read_jsonl(Path(data_dir) / f"{split}.jsonl"):
                key = (record.get("source", ""), record.get("shard", ""), record["paper_id"])
                self.db.execute("INSERT OR IGNORE INTO papers (source, shard, paper_id, split) "
                                "VALUES (?, ?, ?, ?)", (*key, split))
                paper = self._paper_row(*key)
                for sample in record["samples"]:
                    if sample.get("label") != CITE_WORTHY or not sample.get("ref_ids"):
                        continue
                    counts["dataset_citing_sentences"] += 1
                    number = counts["dataset_citing_sentences"]
                    ref_ids = dict.fromkeys(ref_id for marker in sample["ref_ids"] for ref_id in marker or ())
                    self.db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?)", [
                        (number, paper, ref_id, sample["text"]) for ref_id in ref_ids if ref_id])
        counts["papers_selected"] = self.db.execute("SELECT COUNT(*) FROM papers").fetchone()[0]

    def _paper_row(self, source: str, shard: str, paper_id: str) -> int | None:
        found = self.db.execute("SELECT row FROM papers WHERE source = ? AND shard = ? AND paper_id = ?",
                                (source, shard, paper_id)).fetchone()
        return found[0] if found else None

    # -- 2. their references ------------------------------------------------------------------------

    def add_paper(self, paper: Paper, contexts: str, counts: Counter) -> bool:
        """Add ``paper``'s references (and full-text contexts) if it is a selected paper read for the
        first time; whether it was."""
        row = self._paper_row(paper.source, paper.shard, paper.paper_id)
        if row is None:
            row = self._paper_row(paper.source, "", paper.paper_id)
        if row is None or self.db.execute("SELECT read FROM papers WHERE row = ?", (row,)).fetchone()[0]:
            return False
        self.db.execute("UPDATE papers SET read = 1, about = ? WHERE row = ?",
                        (" ".join(filter(None, (paper.title, paper.abstract))), row))
        entry_rows = {}
        for ref_id, entry in paper.bib_entries.items():
            ids = {kind: entry.ids[kind] for kind in ID_KINDS if kind in entry.ids}
            fallback = fallback_key(entry.title, entry.authors, entry.year)
            if not ids and not fallback:
                counts["references_without_identity"] += 1
                continue
            counts["references"] += 1
            entry_rows[ref_id] = self.db.execute(
                "INSERT INTO entries (paper, ref_id, title, authors, year, venue, ids, fallback, kinds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row, ref_id, entry.title, json.dumps(list(entry.authors), ensure_ascii=False), entry.year,
                 entry.venue, json.dumps(ids, sort_keys=True), fallback, " ".join(sorted(ids)))).lastrowid
            self.db.executemany("INSERT INTO keys VALUES (?, ?)",
                                [(key, entry_rows[ref_id]) for key in identifier_keys(ids)])
        if contexts == FULL_TEXT:
            rows, cites = [], []
            for paragraph in resolve_citations(paper.paragraphs, paper.bib_entries):
                cited = set()
                for text, ref_ids in citing_sentences(paragraph.text, paragraph.cite_spans):
                    rows += [(entry_rows[ref_id], text) for ref_id in ref_ids if ref_id in entry_rows]
                    cited.update(entry_rows[ref_id] for ref_id in ref_ids if ref_id in entry_rows)
                cites += [(self.paragraphs, entry) for entry in sorted(cited)]
                self.paragraphs += 1
            self.db.executemany("INSERT INTO contexts VALUES (?, ?)", rows)
            self.db.executemany("INSERT INTO paragraph_cites VALUES (?, ?)", cites)
        else:
            self.db.execute("INSERT INTO contexts SELECT e.row, s.text FROM samples s JOIN entries e "
                            "ON e.paper = s.paper AND e.ref_id = s.ref_id WHERE s.paper = ? ORDER BY s.rowid",
                            (row,))
        return True

    def cited_by_samples(self) -> Iterator[tuple[int, str, list[Reference]]]:
        """Each cite-worthy sample of the selected papers: its number (``select``'s count, in the
        split files' order), its text and the references it cites (those with an identity), in
        reading order (benchmarks/works.py's queries)."""
        rows = self.db.execute(f"SELECT s.sample, s.text, {_ENTRY} FROM samples s JOIN entries e "
                               "ON e.paper = s.paper AND e.ref_id = s.ref_id ORDER BY s.sample, e.row")
        for number, group in itertools.groupby(rows, key=lambda row: row[0]):
            group = list(group)
            yield number, group[0][1], [Reference(*row[2:]) for row in group]

    def unread(self) -> list[tuple[str, str, str]]:
        """Selected papers no input had (reader, shard, id)."""
        return self.db.execute("SELECT source, shard, paper_id FROM papers WHERE read = 0 "
                               "ORDER BY row").fetchall()

    # -- 3. works -----------------------------------------------------------------------------------

    def group(self) -> None:
        """Group the entries into works (their roots, in ``roots``)."""
        size = self.db.execute("SELECT COALESCE(MAX(row), 0) FROM entries").fetchone()[0] + 1
        groups = IdentityGroups(size)
        groups.link_identifiers(self.db.execute("SELECT key, entry FROM keys ORDER BY key, entry"))
        groups.link_fallbacks(self.db.execute("SELECT fallback, row, kinds FROM entries "
                                              "WHERE fallback IS NOT NULL ORDER BY fallback, row"))
        entries = self.db.cursor().execute("SELECT row FROM entries")  # streamed while roots are written
        self.db.executemany("INSERT INTO roots VALUES (?, ?)",
                            ((entry, groups.root(entry)) for (entry,) in entries))
        self.db.execute("CREATE INDEX roots_by_root ON roots (root, entry)")
        self.db.execute("CREATE INDEX contexts_by_entry ON contexts (entry)")

    def works(self) -> Iterator[Work]:
        """Every work, ordered by identifier (its row in the index: its place in that order)."""
        self.db.execute("CREATE TABLE identifiers (root INTEGER PRIMARY KEY, identifier TEXT)")
        self.db.executemany("INSERT INTO identifiers VALUES (?, ?)",
                            ((root, _identifier(entries)) for root, entries in self._by_root()))
        self.db.execute("CREATE TABLE work_rows AS SELECT root, "
                        "ROW_NUMBER() OVER (ORDER BY identifier, root) - 1 AS row FROM identifiers")
        roots = self.db.execute("SELECT w.root, i.identifier FROM work_rows w JOIN identifiers i "
                                "ON i.root = w.root ORDER BY w.row")
        for root, identifier in roots.fetchall():
            yield self._work(identifier, root)

    def citations(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Who cites what, after ``works``: for ``papers`` and ``paragraphs`` (``full_text`` contexts
        only), the pairs (citing unit, work row), each once; units are numbered in reading order."""
        units = {"papers": "SELECT DISTINCT e.paper - 1, w.row FROM entries e "
                           "JOIN roots r ON r.entry = e.row",
                 "paragraphs": "SELECT DISTINCT c.paragraph, w.row FROM paragraph_cites c "
                               "JOIN roots r ON r.entry = c.entry"}
        found = {}
        for name, select in units.items():
            pairs = self.db.execute(f"{select} JOIN work_rows w ON w.root = r.root").fetchall()
            pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
            found[name] = (pairs[:, 0], pairs[:, 1])
        return found

    def paper_texts(self) -> list[str]:
        """Each selected paper's title and abstract, by its unit number in ``citations``' papers."""
        return [about or "" for (about,) in self.db.execute("SELECT about FROM papers ORDER BY row")]

    def _by_root(self) -> Iterator[tuple[int, list[Reference]]]:
        """Each work's root and its entries, in entry order."""
        rows = self.db.execute(f"SELECT r.root, {_ENTRY} FROM roots r JOIN entries e ON e.row = r.entry "
                               "ORDER BY r.root, e.row")
        for root, group in itertools.groupby(rows, key=lambda row: row[0]):
            yield root, [Reference(*row[1:]) for row in group]

    def _work(self, identifier: str, root: int) -> Work:
        entries = [Reference(*row) for row in self.db.execute(
            f"SELECT {_ENTRY} FROM roots r JOIN entries e ON e.row = r.entry WHERE r.root = ? ORDER BY e.row",
            (root,))]
        contexts = self.db.execute(
            "SELECT c.text FROM roots r JOIN contexts c ON c.entry = r.entry WHERE r.root = ? "
            "ORDER BY r.entry, c.rowid", (root,))
        keys = {key for entry in entries for key in identifier_keys(entry.ids)}
        keys |= {entry.fallback for entry in entries if entry.fallback}
        return Work(identifier, _most_common_each(entry.ids for entry in entries),
                    _most_common(entry.title for entry in entries),
                    _most_common(entry.authors for entry in entries) or (),
                    _most_common(entry.year for entry in entries),
                    _most_common(entry.venue for entry in entries),
                    len({entry.paper for entry in entries}), tuple(sorted(keys)),
                    tuple(dict.fromkeys(text for (text,) in contexts)))

    def close(self) -> None:
        self.db.close()


_ENTRY = "e.paper, e.title, e.authors, e.year, e.venue, e.ids, e.fallback"


class Reference:
    """A stored entry, its JSON decoded."""

    __slots__ = ("paper", "title", "authors", "year", "venue", "ids", "fallback")

    def __init__(self, paper: int, title: str | None, authors: str, year: int | None, venue: str | None,
                 ids: str, fallback: str | None):
        self.paper, self.title, self.year, self.venue, self.fallback = paper, title, year, venue, fallback
        self.authors, self.ids = tuple(json.loads(authors)), json.loads(ids)


def _identifier(entries: list[Reference]) -> str:
    """A work's identifier: its first identifier key in kind order, else its least fallback key."""
    ids = _most_common_each(entry.ids for entry in entries)
    return identifier_keys(ids)[0] if ids else min(entry.fallback for entry in entries if entry.fallback)


def _most_common(values) -> object | None:
    """The value most entries give (empty ones ignored; a tie: the first given)."""
    counts = Counter(value for value in values if value)
    return max(counts, key=counts.__getitem__) if counts else None


def _most_common_each(id_sets) -> dict[str, str]:
    """For each identifier kind, the value most entries give."""
    by_kind: dict[str, list[str]] = {}
    for ids in id_sets:
        for kind, value in ids.items():
            by_kind.setdefault(kind, []).append(value)
    return {kind: _most_common(by_kind[kind]) for kind in ID_KINDS if kind in by_kind}
