"""Okapi BM25 over a fixed set of documents (the candidates of one ranking).

Term weights are the corpus-level ones of Robertson & Zaragoza (2009): idf = ln(1 + (N - df + 0.5)
/ (df + 0.5)) (never negative), term frequency saturated by ``k1`` and normalised by document
length with ``b``. Documents are weighted once into a sparse matrix, so scoring a query is one
sparse row times a matrix; 50,000 candidates score in milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

K1, B = 1.2, 0.75
_WORD = re.compile(r"[^\W_]{2,}")


def tokens(text: str) -> list[str]:
    """Lower-case words of two letters or more, English stop words dropped, a plural 's' stripped
    (so 'networks' matches 'network'; no stemmer is kept for this one rule)."""
    words = (w.lower() for w in _WORD.findall(text))
    return [_singular(w) for w in words if w not in ENGLISH_STOP_WORDS]


def _singular(word: str) -> str:
    plural = len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
    return word[:-1] if plural else word


class BM25:
    """BM25 scores of queries against ``documents`` (one text per candidate)."""

    def __init__(self, documents: Sequence[str], k1: float = K1, b: float = B):
        self.vocabulary: dict[str, int] = {}
        rows, cols = [], []
        for row, text in enumerate(documents):
            for word in tokens(text):
                rows.append(row)
                cols.append(self.vocabulary.setdefault(word, len(self.vocabulary)))
        shape = (len(documents), max(len(self.vocabulary), 1))
        counts = sparse.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=shape)
        counts.sum_duplicates()
        lengths = np.asarray(counts.sum(axis=1)).ravel()
        average = lengths.mean() if len(documents) and lengths.mean() > 0 else 1.0
        frequency = np.bincount(counts.indices, minlength=shape[1])
        idf = np.log1p((len(documents) - frequency + 0.5) / (frequency + 0.5))
        norm = k1 * (1 - b + b * lengths / average)
        weights = counts.tocoo()
        values = weights.data * (k1 + 1) / (weights.data + norm[weights.row]) * idf[weights.col]
        # Columns are terms: a query picks its terms' columns and sums them.
        self.weights = sparse.csc_matrix((values, (weights.row, weights.col)), shape=shape)

    def scores(self, query: str) -> np.ndarray:
        """One score per document (0 where no query term occurs); a repeated query term counts once."""
        columns = sorted({self.vocabulary[w] for w in tokens(query) if w in self.vocabulary})
        if not columns:
            return np.zeros(self.weights.shape[0])
        return np.asarray(self.weights[:, columns].sum(axis=1)).ravel()
