"""Okapi BM25 over a fixed set of documents (the candidates of one ranking): ``bm25s``'s index with
this module's tokens; ``save`` / ``load`` keep one on disk (the cited-works index, loaded memory-mapped).

Term weights are the corpus-level ones of Lucene's BM25 (Robertson & Zaragoza 2009, with idf = ln(1 +
(N - df + 0.5) / (df + 0.5)), never negative): term frequency saturated by ``k1`` and normalised by
document length with ``b``. ``bm25s`` weights the documents once into a sparse matrix, so scoring a
query sums a few of its columns; 50,000 candidates score in milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from citeworth.text.stop_words import STOP_WORDS

K1, B = 1.2, 0.75
_WORD = re.compile(r"[^\W_]{2,}")


def tokens(text: str) -> list[str]:
    """Lower-case words of two letters or more, English stop words dropped, a plural 's' stripped
    (so 'networks' matches 'network'; no stemmer is kept for this one rule)."""
    words = (w.lower() for w in _WORD.findall(text))
    return [_singular(w) for w in words if w not in STOP_WORDS]


def _singular(word: str) -> str:
    plural = len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
    return word[:-1] if plural else word


class BM25:
    """BM25 scores of queries against ``documents`` (one text per candidate)."""

    def __init__(self, documents: Iterable[str], k1: float = K1, b: float = B):
        words = [tokens(text) for text in documents]
        self.size = len(words)
        self.index = None  # a bm25s.BM25 (imported here: the language server starts without it)
        if any(words):  # bm25s cannot index a corpus without a word
            import bm25s

            self.index = bm25s.BM25(k1=k1, b=b, method="lucene")
            self.index.index(words, show_progress=False)

    def save(self, folder: Path) -> None:
        """``bm25s``'s files in ``folder`` (nothing for an index without a word)."""
        Path(folder).mkdir(parents=True, exist_ok=True)
        if self.index is not None:
            self.index.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path, size: int) -> BM25:
        """An index ``save`` wrote for ``size`` documents, its arrays memory-mapped."""
        found = cls.__new__(cls)
        found.size = size
        found.index = None
        if any(Path(folder).iterdir()):
            import bm25s

            found.index = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        return found

    def scores(self, query: str) -> np.ndarray:
        """One score per document (0 where no query term occurs); a repeated query term counts once."""
        words = list(dict.fromkeys(tokens(query)))
        if self.index is None or not words:
            return np.zeros(self.size)
        return self.index.get_scores(words).astype(np.float64)
