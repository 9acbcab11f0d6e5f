"""Ranking candidates for sentences: lexical (BM25), dense (MiniLM), the candidates' citation
contexts, author surnames, and their fusion.

Signals, each a score per (sentence, candidate):

- ``bm25``: BM25 of the sentence against each candidate's text (title, abstract, keywords,
  authors); term weights from the candidates themselves.
- ``dense``: cosine of the sentence and the candidate's text under the embedded MiniLM. Above
  ``DENSE_ALL`` candidates only the BM25 top ``DENSE_POOL`` of each sentence (and the entries its
  author names match) are embedded, so a 50,000-entry ``.bib`` costs seconds, not minutes.
- ``context_bm25`` / ``context_dense``: the best BM25 / cosine of the sentence against the sentences
  that cite the candidate elsewhere (other sentences of the draft, other corpus papers); a context
  identical to the sentence itself is never used, so a benchmark sentence cannot find itself.
- ``authors``: surnames written in the sentence (``authors.py``).

``fused``: reciprocal rank fusion (Cormack et al., 2009; k = 60) of a lexical ranking (the better
of ``bm25`` and ``context_bm25``) and a dense one (the better of ``dense`` and ``context_dense``),
plus the author score, which is larger than any fused rank score can be: an entry whose first
author the sentence names ranks first, and the other signals order such entries. (Fusing the four
rankings as equals was worse on the benchmark: an entry without contexts then loses two votes.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citeworth.suggest.authors import AuthorIndex
from citeworth.suggest.bm25 import BM25
from citeworth.suggest.candidates import Candidate
from citeworth.suggest.dense import Encoder

RRF_K = 60
DENSE_ALL = 2000
DENSE_POOL = 200


@dataclass(frozen=True)
class Suggestion:
    index: int  # into the ranker's candidates
    score: float


class Ranker:
    """Every signal for a fixed list of candidates; ``encoder=None`` leaves the dense ones out."""

    def __init__(self, candidates: Sequence[Candidate], encoder: Encoder | None = None):
        self.candidates = list(candidates)
        self.encoder = encoder
        self.bm25 = BM25([c.text for c in self.candidates])
        self.authors = AuthorIndex([c.authors for c in self.candidates], [c.year for c in self.candidates])
        self.context_owner = np.array([i for i, c in enumerate(self.candidates) for _ in c.contexts], int)
        self.context_texts = [text for c in self.candidates for text in c.contexts]
        self.context_bm25 = BM25(self.context_texts) if self.context_texts else None

    def signals(self, sentences: Sequence[str]) -> dict[str, np.ndarray]:
        """Each signal's scores, a (sentences x candidates) matrix; NaN: not scored."""
        shape = (len(sentences), len(self.candidates))
        found = {"bm25": _rows(self.bm25.scores, sentences, shape),
                 "authors": _rows(self.authors.scores, sentences, shape)}
        if self.context_bm25 is not None:
            shape = (len(sentences), len(self.context_texts))
            found["context_bm25"] = self._context_max(sentences,
                                                      _rows(self.context_bm25.scores, sentences, shape))
        if self.encoder is not None and self.candidates and sentences:
            queries = self.encoder.encode(sentences)
            found["dense"] = self._dense(queries, found["bm25"], found["authors"])
            if self.context_texts:
                found["context_dense"] = self._context_max(
                    sentences, queries @ self.encoder.encode(self.context_texts).T)
        return found

    def _dense(self, queries: np.ndarray, bm25: np.ndarray, authors: np.ndarray) -> np.ndarray:
        dense = np.full(bm25.shape, np.nan)
        if len(self.candidates) <= DENSE_ALL:
            pool = np.arange(len(self.candidates))
        else:
            top = np.argpartition(-bm25, DENSE_POOL, axis=1)[:, :DENSE_POOL]
            pool = np.union1d(top.ravel(), np.flatnonzero(authors.max(axis=0)))
        vectors = self.encoder.encode([self.candidates[i].text for i in pool])
        dense[:, pool] = queries @ vectors.T
        return dense

    def _context_max(self, sentences: Sequence[str], scores: np.ndarray) -> np.ndarray:
        """The best score of each candidate's contexts (NaN: it has none), its own sentence left out."""
        best = np.full((len(sentences), len(self.candidates)), np.nan)
        for row, sentence in enumerate(sentences):
            usable = np.array([text != sentence for text in self.context_texts])
            for owner, score in zip(self.context_owner[usable], scores[row][usable], strict=True):
                if not score <= best[row, owner]:  # NaN (none yet) or lower
                    best[row, owner] = score
        return best

    def rank(self, sentences: Sequence[str], k: int | None = None) -> list[list[Suggestion]]:
        """The fused ranking of the candidates for each sentence (the top ``k``, or all)."""
        fused = fuse(self.signals(sentences))
        return [[Suggestion(int(i), float(row[i])) for i in order(row)[:k]] for row in fused]


def _rows(score, sentences: Sequence[str], shape: tuple[int, int]) -> np.ndarray:
    return np.vstack([score(s) for s in sentences]) if sentences else np.zeros(shape)


def fuse(signals: dict[str, np.ndarray]) -> np.ndarray:
    """Reciprocal rank fusion of a lexical and a dense ranking, plus the author score. Each ranking
    scores a candidate by the better of its own text and its best context: an entry is as close to
    a sentence as the closest thing said of it."""
    fused = signals["authors"].copy()
    for own, contexts in (("bm25", "context_bm25"), ("dense", "context_dense")):
        present = [signals[name] for name in (own, contexts) if name in signals]
        if present:
            fused += rrf(np.fmax(*present) if len(present) == 2 else present[0])
    return fused


def rrf(scores: np.ndarray) -> np.ndarray:
    """1 / (k + rank) for each candidate a signal scores above 0 (ranks from 1; NaN and 0: unranked)."""
    result = np.zeros_like(scores)
    for row, values in enumerate(scores):
        scored = np.flatnonzero(np.nan_to_num(values, nan=0.0) > 0)
        ranks = np.empty(len(scored))
        ranks[np.argsort(-values[scored], kind="stable")] = np.arange(1, len(scored) + 1)
        result[row, scored] = 1.0 / (RRF_K + ranks)
    return result


def order(scores: np.ndarray) -> np.ndarray:
    """Candidate indices best first; ties keep the bibliography's order; NaN last."""
    return np.argsort(-np.nan_to_num(scores, nan=-np.inf), kind="stable")
