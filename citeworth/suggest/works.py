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
    cocitation.npz which indexed papers and paragraphs cite which works (``suggest/cocitation.py``)
    papers_bm25/   ``bm25s``'s index of the indexed papers' titles and abstracts (the papers like a
                   draft: the works they cite)
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

import functools
import json
import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeworth.core.identity import fallback_key, identifier_keys
from citeworth.core.version import tool_version
from citeworth.suggest import cocitation
from citeworth.suggest.authors import AuthorIndex, surname_key
from citeworth.suggest.bibtex import BibWork
from citeworth.suggest.bm25 import BM25
from citeworth.suggest.ranker import fuse, order

FORMAT = 2  # the layout above; an index of another format is refused with the version that wrote it
DB, BM25_DIR, CITED_BY, VECTORS, GRAPH = "works.sqlite", "bm25", "cited_by.npy", "vectors.npy", "vectors.hnsw"
PAPERS_BM25 = "papers_bm25"
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

    def write_citations(self, pairs: dict[str, tuple[np.ndarray, np.ndarray]], papers: list[str], k1: float,
                        b: float) -> None:
        """Which papers and paragraphs cite which works (``WorkFile.citations``): co-citation; and
        the papers' titles and abstracts (``papers``, by unit) for finding the papers like a draft."""
        counts = {"papers": len(papers), "paragraphs": None}
        cocitation.save(self.folder, {name: cocitation.Relation.of_pairs(*pairs[name], len(self.cited_by),
                                                                         counts[name])
                                      for name in cocitation.RELATIONS})
        BM25(papers, k1, b).save(self.folder / PAPERS_BM25)

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
        self.cocited = cocitation.load(self.folder)
        self.papers_bm25 = BM25.load(self.folder / PAPERS_BM25, self.cocited["papers"].units_count)
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
class Query:
    """A sentence and what its draft says around it: the ranker's question."""

    sentence: str
    neighbours: str = ""  # the sentences before and after it in its paragraph
    about: str = ""  # the draft's title and abstract
    known: tuple[int, ...] = ()  # rows of the works the draft already cites (co-citation evidence)
    nearby: tuple[int, ...] = ()  # ... of those the sentences just before it cite (``NEARBY``)


@dataclass(frozen=True)
class Ranked:
    work: IndexedWork
    score: float
    why: tuple[str, ...] = ()  # the signals that put it there, strongest first


class WorksRanker:
    """Ranks an index's works for sentences in their drafts' context. ``encoder``: embeds the
    sentences (an ``Encoder``) when the index has vectors; None ranks without the dense signal.
    ``model``: the learned weights (``LearnedModel``; default the shipped ``works_ranker.json``)."""

    def __init__(self, index: WorksIndex, encoder=None, model: LearnedModel | None = None):
        self.index = index
        self.encoder = encoder if index.vectors is not None else None
        if self.encoder is not None and self.encoder.name != index.encoder:
            raise WorksIndexError(f"{index.folder}: its vectors were made by the encoder {index.encoder!r}, "
                                  f"not {self.encoder.name!r}: rebuild it, or rank with that encoder")
        self.model = model or LearnedModel.shipped()
        self._draft: dict[str, tuple] = {}  # the last draft's whole-index signals, by what they came from

    def rank(self, queries: Sequence[Query | str], k: int, exclude: Iterable[int] = ()) -> list[list[Ranked]]:
        """The top ``k`` works for each query, none of the rows ``exclude`` (the draft's own)."""
        queries = [Query(q) if isinstance(q, str) else q for q in queries]
        exclude = np.array(sorted(set(exclude)), dtype=np.int64)
        vectors = self._vectors(queries)
        ranked = []
        for query, vector in zip(queries, vectors, strict=True):
            pool, features = self.features(query, vector, exclude)
            if not len(pool):
                ranked.append([])
                continue
            scores, parts = self.model.score(features)
            top = order(scores)[:k]
            ranked.append([Ranked(work, float(scores[i]), self._why(work, parts[:, i], features, i, query))
                           for i, work in zip(top, self.index.works(pool[top]), strict=True)])
        return ranked

    def _vectors(self, queries: Sequence[Query]) -> list[np.ndarray | None]:
        if self.encoder is None or not queries:
            return [None] * len(queries)
        return list(self.encoder.encode([q.sentence for q in queries]))

    def features(self, query: Query, vector: np.ndarray | None,
                 exclude: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The pool of rows for ``query`` (each ranking's best, less ``exclude`` and the known works)
        and every feature on it (``FEATURES``, ``dense`` with vectors; ``pools``: which rankings
        brought it)."""
        bm25 = self.index.bm25.scores(query.sentence)
        neighbours = self.index.bm25.scores(query.neighbours) if query.neighbours else None
        passage = self.index.bm25.scores(f"{query.sentence} {query.neighbours}") if query.neighbours else bm25
        about = self._per_draft("about", query.about, lambda: self.index.bm25.scores(query.about))
        similar = self._per_draft("similar", query.about, lambda: self._similar(query.about))
        known = np.array(sorted(set(query.known)), dtype=np.int64)
        cocited = {name: self._per_draft(name, known.tobytes(), lambda r=relation: r.counts(known))
                   for name, relation in self.index.cocited.items()}
        wrote = self._per_draft("surnames", known.tobytes(), lambda: self._surnames(known)) or Counter()
        nearby = np.array(sorted(set(query.nearby)), dtype=np.int64)
        close = {name: relation.counts(nearby) if len(nearby) else None
                 for name, relation in self.index.cocited.items()}
        rankings = {"bm25": (bm25, POOL), "cocited": (cocited["papers"], COCITED_POOL),
                    "nearby": (close["paragraphs"], CONTEXT_POOL),
                    "neighbours": (neighbours, CONTEXT_POOL), "about": (about, CONTEXT_POOL),
                    "similar": (similar, CONTEXT_POOL)}
        pools = {name: _top(scores, k) for name, (scores, k) in rankings.items() if scores is not None}
        if vector is not None:
            pools["dense"] = self.index.nearest(vector[None].astype(np.float32), POOL)[0]
        pool = np.setdiff1d(functools.reduce(np.union1d, pools.values()), np.union1d(exclude, known))
        if not len(pool):
            return pool, {}
        def at(scores: np.ndarray | None) -> np.ndarray:
            return scores[pool] if scores is not None else np.zeros(len(pool))

        works = self.index.works(pool)
        cited_by = np.asarray(self.index.cited_by[pool], dtype=np.float64)
        authors = AuthorIndex([w.authors for w in works], [w.year for w in works])
        found = {"bm25": bm25[pool], "bm25_share": _share(bm25[pool]), "neighbours": _share(at(neighbours)),
                 "passage": _share(passage[pool]),
                 "about": _share(at(about), about.max() if about is not None else None),
                 "similar": at(similar), "cited_by": np.log1p(cited_by),
                 "cocited_papers": np.log1p(at(cocited["papers"])),
                 "cocited_share": at(cocited["papers"]) / np.maximum(cited_by, 1) / max(1, len(known)),
                 "cocited_paragraphs": np.log1p(at(cocited["paragraphs"])),
                 "nearby_papers": np.log1p(at(close["papers"])),
                 "nearby_paragraphs": np.log1p(at(close["paragraphs"])),
                 "authors": authors.scores(query.sentence),
                 "shared_authors": np.log1p([sum(wrote[surname_key(a)] for a in w.authors) for w in works])}
        if vector is not None:
            found["dense"] = np.asarray(self.index.vectors[pool], dtype=np.float32) @ vector
        # which rankings brought each candidate (a bit per POOLS entry; the benchmark's ablations)
        found["pools"] = sum(np.isin(pool, pools[name]).astype(np.int64) << bit
                             for bit, name in enumerate(POOLS) if name in pools)
        return pool, found

    def _surnames(self, rows: np.ndarray) -> Counter:
        """How many of the works ``rows`` each (folded) author surname wrote."""
        keys = ({surname_key(name) for name in work.authors} for work in self.index.works(rows))
        return Counter(key for surnames in keys for key in surnames if key)

    def _similar(self, about: str) -> np.ndarray:
        """For every work, how much the indexed papers most like the draft (BM25 of its title and
        abstract against theirs, each as a share of the best) cite it."""
        scores = self.index.papers_bm25.scores(about)
        papers = _top(scores, SIMILAR_PAPERS)
        if not len(papers):
            return np.zeros(self.index.size)
        return self.index.cocited["papers"].spread(papers, scores[papers] / scores[papers].max())

    def _per_draft(self, name: str, key, compute) -> np.ndarray | None:
        """A signal over every work that depends on the draft, not the sentence: computed once per
        draft (``key``: what it came from; empty: none)."""
        if not len(key):
            return None
        if self._draft.get(name, (None,))[0] != key:
            self._draft[name] = (key, compute())
        return self._draft[name][1]

    def _why(self, work: IndexedWork, parts: np.ndarray, features: dict[str, np.ndarray], at: int,
             query: Query) -> tuple[str, ...]:
        """The reasons for a suggestion: its features that raised its score most, in words."""
        reasons = []
        for name in (self.model.features[j] for j in np.argsort(-parts) if parts[j] > 0):
            reason = self._reason(name, work.row, features[name][at], query)
            if reason and reason not in reasons:
                reasons.append(reason)
        return tuple(reasons[:WHY])

    def _reason(self, name: str, row: int, value: float, query: Query) -> str | None:
        if name.startswith("bm25") or name == "dense":
            return f"cited for similar sentences in {_papers(int(self.index.cited_by[row]))}"
        if name == "cited_by":
            return f"cited by {_papers(int(self.index.cited_by[row]))} of the corpus"
        if name.startswith(("cocited", "nearby")) and value > 0:
            relation = "paragraphs" if name.endswith("paragraphs") else "papers"
            known = query.nearby if name.startswith("nearby") else query.known
            shared = self.index.cocited[relation].shared(row, np.array(sorted(set(known))))
            if shared:
                known, count = shared[0]
                unit = relation if count != 1 else relation[:-1]
                others = f" and {len(shared) - 1} more of your references" if len(shared) > 1 else ""
                return f"co-cited with {self.index.work(known).label!r}{others} in {count} {unit}"
        if name == "about" and value > 0:
            return "matches your title and abstract"
        if name == "similar" and value > 0:
            return "cited by papers like yours (their titles and abstracts)"
        if name in ("neighbours", "passage") and value > 0:
            return "matches the sentences around it"
        if name == "shared_authors" and value > 0:
            return f"its authors wrote {round(math.expm1(value))} of your references"
        if name == "authors" and value > 0:
            return "its author is named in the sentence"
        return None


FEATURES = ("bm25", "bm25_share", "neighbours", "passage", "about", "similar", "cited_by", "cocited_papers",
            "cocited_share", "cocited_paragraphs", "nearby_papers", "nearby_paragraphs", "authors",
            "shared_authors", "dense")
POOLS = ("bm25", "cocited", "nearby", "neighbours", "about", "similar", "dense")
NEARBY = 3  # the sentences before a sentence whose citations are its nearby works
COCITED_POOL = 100  # the works most co-cited with the draft's references join the pool
CONTEXT_POOL = 30  # ... and the best for the neighbours, the title and abstract, the papers like it
SIMILAR_PAPERS = 20  # the indexed papers most like a draft whose works it favours
WHY = 2  # reasons given for a suggestion
WEIGHTS = Path(__file__).with_name("works_ranker.json")


@dataclass(frozen=True)
class LearnedModel:
    """A linear model over ``FEATURES`` (logistic regression on standardised features, trained by
    ``benchmarks/works.py --train``): score = sum of (x - mean) / scale * weight; a feature the
    ranking lacks (no vectors: ``dense``) counts as its mean."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    trained: dict

    @classmethod
    def shipped(cls) -> LearnedModel:
        return cls.read(WEIGHTS)

    @classmethod
    def read(cls, path: Path) -> LearnedModel:
        found = json.loads(Path(path).read_text())
        return cls(tuple(found["features"]), tuple(found["mean"]), tuple(found["scale"]),
                   tuple(found["weights"]), found.get("trained", {}))

    def write(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"features": self.features, "mean": self.mean, "scale": self.scale,
                                          "weights": self.weights, "trained": self.trained},
                                         indent=1, sort_keys=True) + "\n")

    def score(self, features: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Each candidate's score, and each feature's part of it (features x candidates)."""
        size = len(next(iter(features.values())))
        parts = np.zeros((len(self.features), size))
        for j, name in enumerate(self.features):
            if name in features:
                parts[j] = (features[name] - self.mean[j]) / self.scale[j] * self.weights[j]
        return parts.sum(axis=0), parts


def fused(signals: dict[str, np.ndarray]) -> np.ndarray:
    """The hand-set fusion the learned model replaced (the benchmark's baseline, 'today's ranker'):
    ``ranker.fuse`` of the lexical and dense rankings and author names, the lexical ranking with
    the popularity prior: a work BM25 scores gains ``PRIOR * ln(1 + cited_by)``. ``signals``: raw
    scores, 1 x pool (``cited_by``: the counts)."""
    ranked = {name: value for name, value in signals.items() if name != "cited_by"}
    ranked.setdefault("authors", np.zeros_like(next(iter(signals.values()))))
    if "cited_by" in signals and "bm25" in ranked:
        bm25 = ranked["bm25"]
        ranked["bm25"] = np.where(bm25 > 0, bm25 + PRIOR * np.log1p(signals["cited_by"]), bm25)
    return fuse(ranked)


def _share(scores: np.ndarray, best: float | None = None) -> np.ndarray:
    """``scores`` over their best (the pool's, or ``best``): comparable between queries."""
    best = scores.max() if best is None and len(scores) else best
    return scores / best if best and best > 0 else np.zeros(len(scores))


def _papers(count: int) -> str:
    return f"{count} paper{'s' if count != 1 else ''}"


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """The rows of the ``k`` best positive scores (fewer when fewer score)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) <= k:
        return positive
    return positive[np.argpartition(-scores[positive], k - 1)[:k]]
