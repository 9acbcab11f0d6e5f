"""The cited-works index on disk: every work the curated papers cite, what it is, how many of those
papers cite it, the sentences that do, and the rankings that find it for a sentence.

The works stage (``citeworth/suggest/cited_works/``) writes it with ``IndexWriter``; ``citeworth check
--suggest --works DIR`` and ``citeworth lsp`` read it with ``WorksIndex`` (opened once per
process) and rank it with ``WorksRanker``. A folder:

    works.sqlite   meta (format, the citeworth version and settings that built it, counts); works
                   (row, identifier, title, authors, year, venue, ids, cited_by); keys (every
                   identifier and fallback key a work's references were known by -> its row, so a
                   draft's .bib entry finds its work); contexts (the sentences citing each work)
    bm25/          ``bm25s``'s index of each work's text: its title twice (a title word weighs
                   more than a context's) and its first ``max_contexts`` citing sentences
                   (memory-mapped when loaded)
    cited_by.npy   the citing-paper count of each row (the popularity prior)
    vectors.npy    (with an encoder) each work's unit vector under the embedded MiniLM (float16)
    vectors.hnsw   an HNSW graph over them (nmslib), so the nearest works are found without reading
                   every vector; with ``vectors.hnsw.dat``, nmslib's copy of the data

Ranking a sentence (``WorksRanker``): a pool of candidates, the BM25 top ``POOL`` and the encoder's
``POOL`` nearest, less the works the draft already has; on the pool, the same signals and fusion as
a draft's own bibliography (``ranker.fuse``: reciprocal rank fusion of the lexical and the dense
ranking, author surnames written in the sentence on top), the lexical ranking with a popularity
prior: a work's BM25 score gains ``PRIOR * ln(1 + cited_by)`` (see ``fused``).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeworth.core.identity import fallback_key, identifier_keys
from citeworth.core.version import tool_version
from citeworth.suggest.authors import AuthorIndex
from citeworth.suggest.bibtex import BibWork
from citeworth.suggest.bm25 import BM25
from citeworth.suggest.ranker import fuse, order

FORMAT = 1  # the layout above; an index of another format is refused with the version that wrote it
DB, BM25_DIR, CITED_BY, VECTORS, GRAPH = "works.sqlite", "bm25", "cited_by.npy", "vectors.npy", "vectors.hnsw"
POOL = 100  # candidates each ranking contributes per sentence
# The popularity prior's weight on BM25's scale (``fused``): on the study's dev sentences (train index,
# a work's title counted once; benchmarks/works.py --split dev) BM25 alone found 38.4% of the cited
# works in its top 10, MRR 0.272; with PRIOR 2, 39.2% and 0.273 (1: 38.4%, 0.275; 3 and more lost
# MRR); a prior fused as a reciprocal rank of its own (weight 0.5): 38.8% and 0.215.
PRIOR = 2.0
HNSW_EF_SEARCH = 200  # nmslib's query-time beam (efSearch), never below the POOL asked for


class IndexWriter:
    """Writes an index into an empty ``folder``: ``add`` each work (in row order), then
    ``write_lexical``, optionally ``write_dense``, then ``finish``."""

    def __init__(self, folder: Path, settings: dict, max_contexts: int):
        self.folder, self.settings, self.max_contexts = Path(folder), settings, max_contexts
        self.db = sqlite3.connect(self.folder / DB)
        self.db.executescript("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE works (row INTEGER PRIMARY KEY, identifier TEXT NOT NULL, title TEXT,
                                authors TEXT NOT NULL, year INTEGER, venue TEXT, ids TEXT NOT NULL,
                                cited_by INTEGER NOT NULL);
            CREATE TABLE keys (key TEXT PRIMARY KEY, work INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE contexts (work INTEGER NOT NULL, text TEXT NOT NULL);
        """)
        self.documents: list[str] = []  # each work's BM25 text, by row
        self.titles: list[str] = []
        self.cited_by: list[int] = []
        self.counts: Counter = Counter()
        self.encoder: str | None = None

    def add(self, work) -> None:
        """One work (a ``suggest.cited_works.build.Work``) as the next row."""
        row = len(self.documents)
        self.db.execute("INSERT INTO works VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (row, work.identifier, work.title, json.dumps(list(work.authors), ensure_ascii=False),
                         work.year, work.venue, json.dumps(work.ids, sort_keys=True), work.cited_by))
        self.db.executemany("INSERT OR IGNORE INTO keys VALUES (?, ?)", [(key, row) for key in work.keys])
        self.db.executemany("INSERT INTO contexts VALUES (?, ?)", [(row, text) for text in work.contexts])
        title = work.title or ""
        self.documents.append(" ".join([title, title, *work.contexts[:self.max_contexts]]))
        self.titles.append(work.title or work.identifier)
        self.cited_by.append(work.cited_by)
        self.counts["works"] += 1
        self.counts["works_cited_by_2_or_more"] += work.cited_by >= 2
        self.counts["works_with_contexts"] += bool(work.contexts)
        self.counts["contexts"] += len(work.contexts)
        self.counts[f"works_by_{work.identifier.split(':')[0]}"] += 1

    def write_lexical(self, k1: float, b: float) -> None:
        BM25(self.documents, k1, b).save(self.folder / BM25_DIR)
        self.documents = []
        np.save(self.folder / CITED_BY, np.array(self.cited_by, dtype=np.int32))

    def write_dense(self, encoder: str, max_length: int, batch_size: int, device: str, m: int,
                    ef_construction: int) -> None:
        """The titles' unit vectors (float16) and the HNSW graph over them."""
        import nmslib

        from citeworth.models import encoders, loop

        model, tokenizer = encoders.load_encoder_and_tokenizer(encoder)
        model.to(loop.resolve_device(device)).eval()
        order_ = sorted(range(len(self.titles)), key=lambda i: (len(self.titles[i]), i))
        vectors = np.zeros((len(self.titles), model.config.hidden_size), dtype=np.float32)
        vectors[order_] = encoders.embed_texts(model, tokenizer, [self.titles[i] for i in order_], max_length,
                                               batch_size, loop.resolve_device(device), desc="works: embed")
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        np.save(self.folder / VECTORS, vectors.astype(np.float16))
        graph = nmslib.init(method="hnsw", space="cosinesimil")
        graph.addDataPointBatch(vectors.astype(np.float16).astype(np.float32))
        # one thread: the same graph, byte for byte, on every run
        graph.createIndex({"M": m, "efConstruction": ef_construction, "indexThreadQty": 1},
                          print_progress=False)
        graph.saveIndex(str(self.folder / GRAPH), save_data=True)
        self.encoder = encoder
        self.settings = {**self.settings, "encoder_sha256": encoders.encoder_digest(encoder)}

    def finish(self, counts: dict) -> None:
        meta = {"format": FORMAT, "citeworth": tool_version(), "works": len(self.cited_by),
                "encoder": self.encoder, "settings": self.settings, "counts": counts}
        self.db.executemany("INSERT INTO meta VALUES (?, ?)", [
            (key, json.dumps(value, sort_keys=True, default=str)) for key, value in meta.items()])
        self.db.execute("CREATE INDEX contexts_by_work ON contexts (work)")
        self.db.commit()
        self.db.close()


class WorksIndexError(ValueError):
    """The index cannot be used: missing, not an index, another format, another encoder."""


@dataclass(frozen=True)
class IndexedWork(BibWork):
    row: int = 0
    identifier: str = ""
    cited_by: int = 0

    @property
    def label(self) -> str:
        """'Title (2017)'."""
        return f"{self.title or self.identifier}" + (f" ({self.year})" if self.year else "")


class WorksIndex:
    """A built index, opened read-only; ``encoder``: the query encoder (None: lexical only)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        path = self.folder / DB
        if not path.is_file():
            raise WorksIndexError(f"{folder}: no cited-works index (build one with `citeworth run works`)")
        try:
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            rows = self.db.execute("SELECT key, value FROM meta").fetchall()
            self.meta = {key: json.loads(value) for key, value in rows}
        except sqlite3.DatabaseError as exc:
            raise WorksIndexError(f"{folder}: not a cited-works index ({exc})") from exc
        if self.meta.get("format") != FORMAT:
            raise WorksIndexError(
                f"{folder}: a cited-works index of format {self.meta.get('format')}, built by citeworth "
                f"{self.meta.get('citeworth', '?')}; this citeworth ({tool_version()}) reads format "
                f"{FORMAT}: rebuild it with `citeworth run works`")
        self.size = int(self.meta["works"])
        self.bm25 = BM25.load(self.folder / BM25_DIR, self.size)
        self.cited_by = np.load(self.folder / CITED_BY, mmap_mode="r")
        vectors = self.folder / VECTORS
        self.vectors = np.load(vectors, mmap_mode="r") if vectors.is_file() else None
        self._graph = None

    @property
    def encoder(self) -> str | None:
        """The encoder the works' vectors were made with (None: no vectors)."""
        return self.meta.get("encoder")

    def work(self, row: int) -> IndexedWork:
        return self.works([row])[0]

    def works(self, rows: Sequence[int]) -> list[IndexedWork]:
        found = {}
        for start in range(0, len(rows), 500):
            chunk = [int(row) for row in rows[start:start + 500]]
            for row, identifier, title, authors, year, venue, ids, cited_by in self.db.execute(
                    "SELECT row, identifier, title, authors, year, venue, ids, cited_by FROM works "
                    f"WHERE row IN ({','.join('?' * len(chunk))})", chunk):
                found[row] = IndexedWork(title, tuple(json.loads(authors)), year, venue, json.loads(ids), row,
                                         identifier, cited_by)
        return [found[int(row)] for row in rows]

    def contexts(self, row: int, limit: int = 3) -> list[str]:
        return [text for (text,) in self.db.execute("SELECT text FROM contexts WHERE work = ? ORDER BY rowid "
                                                    "LIMIT ?", (int(row), limit))]

    def find(self, ids: dict[str, str], title: str | None, authors: Sequence[str],
             year: int | None) -> int | None:
        """The row of the work a reference names: by its identifiers, else its fallback key."""
        keys = identifier_keys(ids)
        if fallback := fallback_key(title, authors, year):
            keys.append(fallback)
        for key in keys:
            if found := self.db.execute("SELECT work FROM keys WHERE key = ?", (key,)).fetchone():
                return found[0]
        return None

    def nearest(self, queries: np.ndarray, k: int) -> list[np.ndarray]:
        """The rows of the ``k`` works nearest each query vector (approximately: the HNSW graph)."""
        if self._graph is None:
            import nmslib

            self._graph = nmslib.init(method="hnsw", space="cosinesimil")
            self._graph.loadIndex(str(self.folder / GRAPH), load_data=True)
            self._graph.setQueryTimeParams({"efSearch": max(HNSW_EF_SEARCH, k)})
        return [np.asarray(rows, dtype=np.int64) for rows, _ in self._graph.knnQueryBatch(queries, k=k)]

    def close(self) -> None:
        self.db.close()


@dataclass(frozen=True)
class Ranked:
    work: IndexedWork
    score: float


class WorksRanker:
    """Ranks an index's works for sentences. ``encoder``: embeds the sentences (an ``Encoder``)
    when the index has vectors; None ranks lexically."""

    def __init__(self, index: WorksIndex, encoder=None):
        self.index = index
        self.encoder = encoder if index.vectors is not None else None
        if self.encoder is not None and self.encoder.name != index.encoder:
            raise WorksIndexError(f"{index.folder}: its vectors were made by the encoder {index.encoder!r}, "
                                  f"not {self.encoder.name!r}: rebuild it, or rank with that encoder")

    def rank(self, sentences: Sequence[str], k: int, exclude: Iterable[int] = ()) -> list[list[Ranked]]:
        """The top ``k`` works for each sentence, none of the rows ``exclude`` (the draft's own)."""
        exclude = np.array(sorted(set(exclude)), dtype=np.int64)
        queries = self.encoder.encode(list(sentences)) if self.encoder is not None and sentences else None
        ranked = []
        for number, sentence in enumerate(sentences):
            query = None if queries is None else queries[number]
            pool, signals = self.signals(sentence, query, exclude)
            if not len(pool):
                ranked.append([])
                continue
            scores = fused(signals)[0]
            top = order(scores)[:k]
            ranked.append([Ranked(work, float(scores[i]))
                           for i, work in zip(top, self.index.works(pool[top]), strict=True)])
        return ranked

    def signals(self, sentence: str, query: np.ndarray | None,
                exclude: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The pool of rows for ``sentence`` and each signal on it (1 x pool; NaN: not scored)."""
        bm25 = self.index.bm25.scores(sentence)
        pools = [_top(bm25, POOL)]
        if query is not None:
            pools.append(self.index.nearest(query[None].astype(np.float32), POOL)[0])
        pool = np.setdiff1d(np.union1d(*pools) if len(pools) > 1 else pools[0], exclude)
        if not len(pool):
            return pool, {}
        works = self.index.works(pool)
        authors = AuthorIndex([w.authors for w in works], [w.year for w in works])
        found = {"bm25": bm25[pool][None], "authors": authors.scores(sentence)[None],
                 "cited_by": np.asarray(self.index.cited_by[pool], dtype=np.float64)[None]}
        if query is not None:
            vectors = np.asarray(self.index.vectors[pool], dtype=np.float32)
            found["dense"] = (vectors @ query)[None]
        return pool, found


def fused(signals: dict[str, np.ndarray]) -> np.ndarray:
    """``ranker.fuse`` of the lexical and dense rankings and author names, the lexical ranking with
    the popularity prior: a work BM25 scores gains ``PRIOR * ln(1 + cited_by)`` (a work more papers
    of the corpus cite is more likely the one meant, all else equal)."""
    ranked = {name: value for name, value in signals.items() if name != "cited_by"}
    ranked.setdefault("authors", np.zeros_like(next(iter(signals.values()))))
    if "cited_by" in signals and "bm25" in ranked:
        bm25 = ranked["bm25"]
        ranked["bm25"] = np.where(bm25 > 0, bm25 + PRIOR * np.log1p(signals["cited_by"]), bm25)
    return fuse(ranked)


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """The rows of the ``k`` best positive scores (fewer when fewer score)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) <= k:
        return positive
    return positive[np.argpartition(-scores[positive], k - 1)[:k]]
