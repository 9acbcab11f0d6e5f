"""Balance per citing sentence: all its positive pairs and as many of its negatives, drawn at random.

The generator is seeded by (seed, a hash of the citing sentence's id), so a sentence's draw is the
same whatever order the sentences come in, and however the corpus is sharded. Where a sentence has
fewer negatives than positives (a short cited abstract), as many positives as negatives are drawn
instead, so that every citing sentence keeps positives = negatives.
"""

from __future__ import annotations

import hashlib

import numpy as np


def sentence_rng(seed: int, citing_id: str) -> np.random.Generator:
    """The generator of one citing sentence's draw."""
    return np.random.default_rng([seed, int(hashlib.sha256(citing_id.encode()).hexdigest()[:16], 16)])


def balanced(labels: np.ndarray, seed: int, citing_id: str) -> np.ndarray:
    """Indices (ascending) of the pairs kept among one citing sentence's ``labels`` (0/1)."""
    labels = np.asarray(labels)
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    keep = min(len(positives), len(negatives))
    rng = sentence_rng(seed, citing_id)
    if len(positives) > keep:
        positives = rng.choice(positives, size=keep, replace=False)
    else:
        negatives = rng.choice(negatives, size=keep, replace=False)
    return np.sort(np.concatenate([positives, negatives]))
