"""Metrics of the cite-worthy class, per field, PR curve rows and seed aggregates, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from citeworth.models.evaluation import aggregate_seeds, classification_metrics, mean_std, pr_curve_rows


def test_metrics_are_those_of_the_positive_class_overall_and_per_field():
    y = np.array([1, 0, 1, 1, 0, 0])
    scores = np.array([0.9, 0.6, 0.4, 0.7, 0.1, 0.5])  # predicted 1 at >= 0.5: [1, 1, 0, 1, 0, 1]
    fields = ["Biology", "Biology", "Physics", "Physics", "Physics", "Biology"]
    m = classification_metrics(y, scores, fields)
    assert (m["precision"], m["recall"]) == (pytest.approx(2 / 4), pytest.approx(2 / 3))
    assert m["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert m["confusion"] == {"tn": 1, "fp": 2, "fn": 1, "tp": 2}
    assert m["per_field"]["Biology"]["precision"] == pytest.approx(1 / 3)
    assert m["per_field"]["Biology"]["recall"] == pytest.approx(1.0)
    assert m["per_field"]["Physics"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "n": 3,
                                         "n_positive": 2}


def test_undefined_precision_is_zero_and_average_precision_needs_both_classes():
    m = classification_metrics(np.array([0, 0]), np.array([0.1, 0.2]), ["Biology", "Biology"])
    assert (m["precision"], m["recall"], m["f1"], m["average_precision"]) == (0.0, 0.0, 0.0, None)
    assert pr_curve_rows(np.array([0, 0]), np.array([0.1, 0.2])) == []


def test_pr_curve_rows_run_over_thresholds():
    rows = pr_curve_rows(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.3, 0.1]))
    assert [r["threshold"] for r in rows] == [0.1, 0.3, 0.8, 0.9]
    assert rows[0] == {"threshold": 0.1, "precision": 0.5, "recall": 1.0}
    assert rows[-1] == {"threshold": 0.9, "precision": 1.0, "recall": 0.5}


def test_seed_aggregates_are_mean_and_population_std():
    assert mean_std([0.5, 0.7]) == {"mean": pytest.approx(0.6), "std": pytest.approx(0.1), "n": 2}
    runs = [{"precision": 0.4, "recall": 0.6, "f1": 0.48}, {"precision": 0.6, "recall": 0.6, "f1": 0.6}]
    assert aggregate_seeds(runs)["recall"] == {"mean": pytest.approx(0.6), "std": 0.0, "n": 2}
