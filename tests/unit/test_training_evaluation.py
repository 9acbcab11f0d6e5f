"""Metrics of the cite-worthy class, per field, PR curve rows and seed aggregates, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from citeworth.models.evaluation import (
    aggregate_seeds,
    bootstrap_f1_interval,
    classification_metrics,
    mean_std,
    pr_curve_rows,
)


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


def test_undefined_precision_is_zero_and_ranking_scores_need_both_classes():
    m = classification_metrics(np.array([0, 0]), np.array([0.1, 0.2]), ["Biology", "Biology"])
    assert (m["precision"], m["recall"], m["f1"], m["roc_auc"], m["pr_auc"]) == (0.0, 0.0, 0.0, None, None)
    assert aggregate_seeds([m, m], keys=("f1", "roc_auc"))["roc_auc"] == {"mean": None, "std": None, "n": 2}


def test_roc_and_pr_auc_rank_the_sentences():
    y = np.array([1, 0, 1, 0, 0])
    m = classification_metrics(y, np.array([0.9, 0.8, 0.3, 0.2, 0.1]), ["Biology"] * 5)
    assert m["roc_auc"] == pytest.approx(5 / 6)  # of 6 (positive, negative) pairs, 5 in order
    assert m["pr_auc"] == pytest.approx((1 + 2 / 3) / 2)  # precision at each positive's rank


def test_the_f1_interval_covers_the_seed_mean_and_narrows_with_more_sentences():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    seeds = [np.where(rng.random(400) < 0.8, y, 1 - y).astype(float) for _ in range(3)]  # 80% right
    mean_f1 = np.mean([classification_metrics(y, s, ["x"] * 400)["f1"] for s in seeds])
    low, high = bootstrap_f1_interval(y, seeds)
    assert low < mean_f1 < high and 0.05 < high - low < 0.15
    low4, high4 = bootstrap_f1_interval(np.tile(y, 4), [np.tile(s, 4) for s in seeds])
    assert high4 - low4 < (high - low) * 0.7  # 4x the sentences: about half the width
    assert bootstrap_f1_interval(y, seeds) == [low, high]  # seeded
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
