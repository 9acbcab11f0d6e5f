"""Positive-unlabelled learning after Elkan & Noto (2008), as §4 of the paper applies it.

Cite-worthy sentences are the labelled positives; the rest are unlabelled (some of them would
deserve a citation). A first classifier g estimates p(s=1|x), the probability of being labelled.
Its mean on held-out labelled positives estimates c = p(s=1|y=1). Every unlabelled sample is then
duplicated: once as positive with weight w(x) = p(y=1|x, s=0) = (1-c)/c * g(x)/(1-g(x)) and once
as negative with weight 1 - w(x); positives keep weight 1.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from citeworth.models.loop import Item

EPS = 1e-6


def estimate_c(scores_of_labelled_positives: np.ndarray) -> float:
    """c = E[g(x) | labelled], estimated on held-out (dev) positives."""
    scores = np.asarray(scores_of_labelled_positives, dtype=np.float64)
    if scores.size == 0:
        raise ValueError("PU learning needs cite-worthy sentences in the dev split to estimate c")
    return float(np.clip(scores.mean(), EPS, 1.0))


def unlabelled_positive_weights(g_scores: np.ndarray, c: float) -> np.ndarray:
    """w(x) = p(y=1 | x, s=0) = (1-c)/c * g/(1-g), clipped to [0, 1]."""
    g = np.clip(np.asarray(g_scores, dtype=np.float64), 0.0, 1.0 - EPS)
    return np.clip((1.0 - c) / c * g / (1.0 - g), 0.0, 1.0)


def pu_items(items: list[Item], weights_by_index: dict[int, float]) -> list[Item]:
    """Positives as they are; each unlabelled item twice: (label 1, w) and (label 0, 1 - w)."""
    out = []
    for item in items:
        (label,), (index,) = item.labels, item.index
        if label == 1:
            out.append(item)
            continue
        w = float(weights_by_index[index])
        out.append(dataclasses.replace(item, labels=[1], weights=[w]))
        out.append(dataclasses.replace(item, labels=[0], weights=[1.0 - w]))
    return out
