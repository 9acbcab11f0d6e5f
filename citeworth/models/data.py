"""Dataset records (the released CiteWorth shape) as model inputs: labels, sentences, fields, weights."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from citeworth.core.schema import CITE_WORTHY, FIELD_OF_STUDY, NOT_CITE_WORTHY

# Class ids: cite-worthy is the positive class.
LABEL_IDS = {NOT_CITE_WORTHY: 0, CITE_WORTHY: 1}


def label_of(sample: dict) -> int:
    try:
        return LABEL_IDS[sample["label"]]
    except KeyError:
        raise ValueError(f"sample label {sample.get('label')!r} is not one of {sorted(LABEL_IDS)}") from None


def field_of(record: dict) -> str:
    fields = record.get(FIELD_OF_STUDY) or ["unknown"]
    return fields[0]


def sentences(records: Iterable[dict]) -> list[str]:
    """Every sentence text, in record order then sample order (the order all scores follow)."""
    return [s["text"] for r in records for s in r["samples"]]


def labels(records: Iterable[dict]) -> np.ndarray:
    return np.array([label_of(s) for r in records for s in r["samples"]], dtype=np.int64)


def fields(records: Iterable[dict]) -> list[str]:
    return [field_of(r) for r in records for _ in r["samples"]]


def balanced_class_weights(y: np.ndarray, n_classes: int = 2) -> np.ndarray:
    """sklearn's "balanced" weights, n / (k * count_c), as the paper's code uses; absent classes get 1."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    weights = np.ones(n_classes)
    present = counts > 0
    weights[present] = len(y) / (n_classes * counts[present])
    return weights
