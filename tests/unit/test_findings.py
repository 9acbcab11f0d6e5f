"""The paper's findings judged by a paired bootstrap on the test predictions (report/findings.py)."""

from __future__ import annotations

import numpy as np
import pytest

from citeworth.core.errors import StageFailed
from citeworth.report.findings import Claim, check_claims, findings_table, predictions

CLAIM = Claim(text="A beats B", better=["a"], worse=["b"])


def test_observed_differences_are_hand_computed_f1_and_recall_gaps():
    # 4 cite-worthy, 4 not. a: TP 3, FP 1, FN 1 -> F1 6/8; b: TP 2, FP 2, FN 2 -> F1 4/8.
    actual = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    a = np.array([1, 1, 1, 0, 1, 0, 0, 0], dtype=bool)
    b = np.array([1, 1, 0, 0, 1, 1, 0, 0], dtype=bool)
    [f1] = check_claims([CLAIM], actual, {"a": a, "b": b}, resamples=100)
    assert f1["pairs"][0]["difference"] == pytest.approx(100 * (6 / 8 - 4 / 8))
    [recall] = check_claims([Claim(text="r", metric="recall", better=["a"], worse=["b"])], actual,
                            {"a": a, "b": b}, resamples=100)
    assert recall["pairs"][0]["difference"] == pytest.approx(100 * (3 / 4 - 2 / 4))


def test_verdicts_shown_reversed_and_not_shown():
    rng = np.random.default_rng(0)
    actual = rng.random(4000) < 0.3
    good = np.where(rng.random(4000) < 0.9, actual, ~actual)  # right 90% of the time
    poor = np.where(rng.random(4000) < 0.7, actual, ~actual)
    twin = np.where(rng.random(4000) < 0.9, actual, ~actual)
    pairs = {"shown": (good, poor), "reversed": (poor, good), "tie": (good, twin)}
    verdict = {name: check_claims([CLAIM], actual, {"a": a, "b": b})[0]["verdict"]
               for name, (a, b) in pairs.items()}
    assert verdict == {"shown": "shown", "reversed": "reversed", "tie": "not shown"}


def test_a_claim_naming_an_untrained_model_is_left_out_and_the_table_lists_the_rest():
    actual = np.array([1, 0, 1, 0], dtype=bool)
    results = check_claims([CLAIM, Claim(text="C beats B", better=["c"], worse=["b"])], actual,
                           {"a": actual, "b": ~actual}, resamples=50)
    assert [r["claim"] for r in results] == ["A beats B"]
    table = findings_table(results, 4)
    assert "| A beats B | **shown** | f1 | a − b: +100.00" in table


def test_predictions_come_from_confusion_files_of_the_same_test_sentences(tmp_path):
    for name, rows in {"a": ["check-worthy,check-worthy", "non-check-worthy,check-worthy"],
                       "b": ["check-worthy,non-check-worthy", "non-check-worthy,non-check-worthy"]}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "confusion.csv").write_text("actual,predicted\n" + "\n".join(rows) + "\n")
    actual, predicted = predictions(tmp_path, ["a", "b"])
    assert actual.tolist() == [True, False]
    assert predicted["a"].tolist() == [True, True] and predicted["b"].tolist() == [False, False]
    (tmp_path / "b" / "confusion.csv").write_text("actual,predicted\nnon-check-worthy,check-worthy\n"
                                                  "non-check-worthy,check-worthy\n")
    with pytest.raises(StageFailed, match="other test sentences"):
        predictions(tmp_path, ["a", "b"])
