"""Metrics of the cite-worthy class (sklearn, as Appendix C.5), per field, curves, seed aggregates and
a bootstrap interval of F1 over test sentences."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from sklearn.metrics import (
    average_precision_score,
    confusion_matrix,
    precision_recall_curve,
    precision_recall_fscore_support,
    roc_auc_score,
)

from citeworth.core.schema import THRESHOLD

# Threshold-free scores (None where the sentences hold one class only) beside P/R/F1 at THRESHOLD.
RANKING_KEYS = ("roc_auc", "pr_auc")
TEST_KEYS = ("precision", "recall", "f1", *RANKING_KEYS)
BOOTSTRAP_RESAMPLES = 1000
_BOOTSTRAP_CHUNK = 50  # resamples drawn at once: memory stays ~50 x sentences integers


def prf(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    """Precision / recall / F1 of the positive (cite-worthy) class; 0 where undefined."""
    p, r, f, _ = precision_recall_fscore_support(
        y_true, y_pred, average="binary", pos_label=1, zero_division=0
    )
    return {"precision": float(p), "recall": float(r), "f1": float(f), "n": int(len(y_true)),
            "n_positive": int(np.sum(y_true == 1))}


def binary_metrics(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    """The columns of Roy & Mercer's Tables 4-6 for 0/1 labels: TP, FP, TN, FN, precision, recall,
    F1 and MCC of the positive class, accuracy and balanced accuracy (the mean of the recalls of
    the classes present). Rounded to 6 places; 0 where undefined (no positive predicted, ...)."""
    y_true, y_pred = np.asarray(y_true, dtype=bool), np.asarray(y_pred, dtype=bool)
    tp, fp = int(np.sum(y_true & y_pred)), int(np.sum(~y_true & y_pred))
    tn, fn = int(np.sum(~y_true & ~y_pred)), int(np.sum(y_true & ~y_pred))
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    recalls = [hits / total for hits, total in ((tp, tp + fn), (tn, tn + fp)) if total]
    return {"tp": tp, "fp": fp, "tn": tn, "fn": fn, "n": tp + fp + tn + fn, **rounded({
        "precision": precision, "recall": recall, "f1": _ratio(2 * precision * recall, precision + recall),
        "mcc": _ratio(tp * tn - fp * fn, math.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))),
        "accuracy": _ratio(tp + tn, tp + fp + tn + fn),
        "balanced_accuracy": float(np.mean(recalls)) if recalls else 0.0})}


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def classification_metrics(y_true: np.ndarray, scores: np.ndarray, fields: Sequence[str],
                           collections: Sequence[str] | None = None) -> dict:
    """Overall and per-field P/R/F1 at ``THRESHOLD``, the confusion matrix, ROC AUC and PR AUC; with
    ``collections`` (each sentence's source collection: eLife, PLOS, ...) every score per collection."""
    y_true = np.asarray(y_true)
    y_pred = (np.asarray(scores) >= THRESHOLD).astype(np.int64)
    metrics = prf(y_true, y_pred)
    tn, fp, fn, tp = confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    metrics["confusion"] = {"tn": int(tn), "fp": int(fp), "fn": int(fn), "tp": int(tp)}
    metrics.update(ranking_metrics(y_true, scores))
    field_array = np.asarray(fields)
    metrics["per_field"] = {
        name: prf(y_true[field_array == name], y_pred[field_array == name]) for name in sorted(set(fields))
    }
    if collections is not None:
        group = np.asarray(collections)
        metrics["per_collection"] = {
            name: {**prf(y_true[group == name], y_pred[group == name]),
                   **ranking_metrics(y_true[group == name], np.asarray(scores)[group == name])}
            for name in sorted(set(collections))}
    return metrics


def ranking_metrics(y_true: np.ndarray, scores: np.ndarray) -> dict:
    """ROC AUC and PR AUC (average precision: the area under the step-wise precision-recall curve);
    None when the labels hold one class only."""
    has_both = 0 < int(np.sum(y_true)) < len(y_true)
    return {"roc_auc": float(roc_auc_score(y_true, scores)) if has_both else None,
            "pr_auc": float(average_precision_score(y_true, scores)) if has_both else None}


def pr_curve_rows(y_true: np.ndarray, scores: np.ndarray) -> list[dict]:
    """Rows of the precision-recall curve (one per threshold) for a DVC ``plots`` CSV."""
    if not 0 < int(np.sum(y_true)) < len(y_true):
        return []
    precision, recall, thresholds = precision_recall_curve(y_true, scores)
    return [
        {"threshold": round(float(t), 6), "precision": round(float(p), 6), "recall": round(float(r), 6)}
        for p, r, t in zip(precision[:-1], recall[:-1], thresholds, strict=True)
    ]


def mean_std(values: Sequence[float | None]) -> dict:
    """Mean and population std over seeds (std 0 for one seed), as Table 4 reports them; a value that
    is undefined (None) in any seed is undefined in the aggregate."""
    if any(v is None for v in values):
        return {"mean": None, "std": None, "n": int(len(values))}
    array = np.asarray(values, dtype=np.float64)
    return {"mean": float(array.mean()), "std": float(array.std()), "n": int(len(array))}


def aggregate_seeds(per_seed: Sequence[dict], keys: Sequence[str] = ("precision", "recall", "f1")) -> dict:
    return {key: mean_std([m[key] for m in per_seed]) for key in keys}


def bootstrap_f1_interval(y_true: np.ndarray, seed_scores: Sequence[np.ndarray], level: float = 0.95,
                          resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> list[float]:
    """Percentile interval of the seed-mean F1 when the test sentences are drawn again with
    replacement (the same draw for every seed's predictions, so it is the mean's interval)."""
    y = np.asarray(y_true).astype(bool)
    predicted = [np.asarray(s) >= THRESHOLD for s in seed_scores]
    tp = np.stack([y & p for p in predicted]).astype(np.int64)  # (seeds, sentences)
    fp = np.stack([~y & p for p in predicted]).astype(np.int64)
    fn = np.stack([y & ~p for p in predicted]).astype(np.int64)
    rng = np.random.default_rng(seed)
    f1s = []
    for start in range(0, resamples, _BOOTSTRAP_CHUNK):
        size = min(_BOOTSTRAP_CHUNK, resamples - start)
        counts = rng.multinomial(len(y), np.full(len(y), 1 / len(y)), size=size)  # (size, sentences)
        t, f_p, f_n = (counts @ m.T for m in (tp, fp, fn))  # (size, seeds)
        denominator = 2 * t + f_p + f_n
        f1 = np.divide(2 * t, denominator, out=np.zeros(t.shape), where=denominator > 0)
        f1s.append(f1.mean(axis=1))
    low, high = np.quantile(np.concatenate(f1s), [(1 - level) / 2, (1 + level) / 2])
    return [round(float(low), 6), round(float(high), 6)]


def rounded(stats: dict) -> dict:
    """``stats`` with its floats rounded to 6 places, as every metrics file writes them."""
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in stats.items()}
