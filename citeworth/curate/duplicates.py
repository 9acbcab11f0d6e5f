"""Copies of one paper across sources and shards, resolved to one copy (the assemble stage).

Curation writes, beside each shard's kept paragraphs, a record of each paper they come from
(``papers/<shard>.jsonl``: ``core.identity.copy_record``). ``CopyIndex`` holds every such copy in
a SQLite file, its identifier keys indexed (sorted on disk, so memory does not grow with them),
groups the copies into papers (``core.identity.IdentityGroups``) and keeps one copy of each paper:
the one whose source ``assemble.source_order`` ranks first; among copies of sources ranked alike,
the first by shard, paper id and reading order. Every paper found in more than one copy is listed
in the duplicates report, with its copies, the one kept and why.

Memory: SQLite's page cache and its sorter, ``PAGE_CACHE_MIB`` each at most, and 9 bytes a copy (the
union-find array and the dropped flags); benchmarks/identity_index.py measures it.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.core.identity import IdentityGroups, copy_kinds, identifier_keys
from citeworth.core.io import atomic_write, dumps

# The readers, best copy first: LaTeX and JATS keep the authors' own citation markup, unarXive the
# citations of its LaTeX parse as placeholders, the S2ORC formats their PDF (or LaTeX) parse, and our
# own GROBID parse of a PDF comes last.
SOURCE_ORDER = ("arxiv_latex", "jats", "unarxive", "s2orc_json", "s2orc_legacy", "s2_api", "tei")
# SQLite's page cache, also its sorter's limit before it spills to temporary files.
PAGE_CACHE_MIB = 64
_COPY = "c.id, c.shard, c.source, c.rank, c.paper_id, c.title, c.ids, c.fallback, c.paragraphs"


class CopyIndex:
    """Every copy in a SQLite work file under ``folder``, numbered in the order added."""

    def __init__(self, folder: Path, source_order: list[str]):
        self.source_order = list(source_order)
        self.rank = {source: rank for rank, source in enumerate(source_order)}
        self.copies = 0
        self.db = sqlite3.connect(Path(folder) / "copies.sqlite")
        # A work file rebuilt on every run: no journal.
        self.db.executescript(f"""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -{PAGE_CACHE_MIB * 1024};
            CREATE TABLE copies (id INTEGER PRIMARY KEY, shard TEXT, source TEXT, rank INTEGER,
                paper_id TEXT, title TEXT, ids TEXT, kinds TEXT, fallback TEXT, paragraphs INTEGER);
            CREATE TABLE keys (key TEXT, copy INTEGER);
            CREATE TABLE members (paper INTEGER, copy INTEGER PRIMARY KEY);
        """)

    def add(self, shard: str, record: dict) -> int:
        """Add the copy ``record`` of shard ``shard``; its number."""
        source = record["source"]
        if source not in self.rank:
            raise StageFailed(f"assemble.source_order {self.source_order} does not rank source {source!r} "
                              f"(shard {shard}): list every source the inputs read")
        copy = self.copies
        self.db.execute("INSERT INTO copies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (copy, shard, source, self.rank[source], record["paper_id"], record["title"],
                         dumps(record["ids"]), copy_kinds(record), record["fallback"], record["paragraphs"]))
        self.db.executemany("INSERT INTO keys VALUES (?, ?)",
                            [(key, copy) for key in identifier_keys(record["ids"])])
        self.copies += 1
        return copy

    def resolve(self) -> tuple[bytearray, dict]:
        """Group the copies into papers; which copies are dropped (1 at a copy's number) and the
        counts of the duplicates report."""
        self.db.executescript("""
            CREATE INDEX keys_by_key ON keys (key, copy);
            CREATE INDEX copies_by_fallback ON copies (fallback, id) WHERE fallback IS NOT NULL;
        """)
        groups = IdentityGroups(self.copies)
        groups.link_identifiers(self.db.execute("SELECT key, copy FROM keys ORDER BY key, copy"))
        groups.link_fallbacks(self.db.execute(
            "SELECT fallback, id, kinds FROM copies WHERE fallback IS NOT NULL ORDER BY fallback, id"))
        self.db.executemany("INSERT OR IGNORE INTO members VALUES (?, ?)", _members(groups))
        dropped = bytearray(self.copies)
        by_source: Counter[str] = Counter()
        papers = paragraphs = 0
        for _, others in self.groups():
            papers += 1
            for copy in others:
                dropped[copy["copy"]] = 1
                by_source[copy["source"]] += 1
                paragraphs += copy["paragraphs"]
        dropped_copies = sum(by_source.values())
        counts = {"copies": self.copies, "papers": self.copies - dropped_copies,
                  "papers_in_several_copies": papers, "dropped_copies": dropped_copies,
                  "dropped_paragraphs": paragraphs, "dropped_by_source": dict(sorted(by_source.items()))}
        return dropped, counts

    def groups(self) -> Iterator[tuple[dict, list[dict]]]:
        """Each paper found in several copies, in the order of its first copy: (the copy kept, the
        copies dropped)."""
        rows = self.db.execute(f"SELECT m.paper, {_COPY} FROM members m JOIN copies c ON c.id = m.copy "
                               "ORDER BY m.paper, c.id")
        for _, members in itertools.groupby(rows, key=itemgetter(0)):
            kept, *dropped = sorted((_copy(row[1:]) for row in members),
                                    key=itemgetter("rank", "shard", "paper_id", "copy"))
            yield kept, dropped

    def described(self, kept: dict, dropped: list[dict]) -> dict:
        """A paper of several copies as the report shows it: its identity (every key of its copies),
        title, the copy kept, the copies dropped and why."""
        copies = [kept, *dropped]
        keys = {key for copy in copies for key in identifier_keys(copy["ids"])}
        keys |= {copy["fallback"] for copy in copies if copy["fallback"]}
        return {"identity": sorted(keys), "title": kept["title"], "kept": _shown(kept),
                "dropped": [_shown(copy) for copy in dropped], "why": self._why(kept, dropped)}

    def _why(self, kept: dict, dropped: list[dict]) -> str:
        ranked_below = sorted({copy["source"] for copy in dropped if copy["rank"] > kept["rank"]},
                              key=self.rank.__getitem__)
        reasons = [f"{kept['source']} ranks before {', '.join(ranked_below)} in assemble.source_order"] \
            if ranked_below else []
        if any(copy["rank"] == kept["rank"] for copy in dropped):
            reasons.append(f"of the {kept['source']} copies, the first by shard, paper id and reading order")
        return "; ".join(reasons)

    def close(self) -> None:
        self.db.close()


def _members(groups: IdentityGroups) -> Iterator[tuple[int, int]]:
    """(paper, copy) of every copy of a paper found in several copies; a paper is its first copy."""
    for copy in range(len(groups)):
        if (paper := groups.root(copy)) != copy:
            yield paper, paper
            yield paper, copy


def _copy(row: tuple) -> dict:
    copy, shard, source, rank, paper_id, title, ids, fallback, paragraphs = row
    return {"copy": copy, "shard": shard, "source": source, "rank": rank, "paper_id": paper_id,
            "title": title, "ids": json.loads(ids), "fallback": fallback, "paragraphs": paragraphs}


def _shown(copy: dict) -> dict:
    return {key: copy[key] for key in ("source", "shard", "paper_id", "ids", "paragraphs")}


def write_report(path: Path, index: CopyIndex, counts: dict) -> None:
    """The duplicates report (sorted keys), streamed a paper of several copies a line."""
    with atomic_write(Path(path)) as out:
        out.write(f'{{"counts":{dumps(counts)},"groups":[')
        for number, (kept, dropped) in enumerate(index.groups()):
            out.write(("," if number else "") + "\n" + dumps(index.described(kept, dropped)))
        out.write(f'\n],"source_order":{dumps(index.source_order)}}}\n')
