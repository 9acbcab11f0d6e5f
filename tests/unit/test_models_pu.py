"""PU learning (Elkan & Noto): c on labelled positives, the weight formula, the duplication."""

from __future__ import annotations

import numpy as np
import pytest

from citeworth.models import pu
from citeworth.models.loop import Item


def test_c_is_the_mean_score_of_labelled_positives():
    assert pu.estimate_c(np.array([0.2, 0.4, 0.9])) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="dev split"):
        pu.estimate_c(np.array([]))


@pytest.mark.parametrize("g,c,expected", [
    (0.2, 0.5, 0.25),        # (1-c)/c = 1, g/(1-g) = 0.25
    (0.5, 0.8, 0.25),        # 0.25 * 1
    (0.1, 0.25, 1 / 3),      # 3 * 1/9
    (0.0, 0.5, 0.0),
    (0.9, 0.5, 1.0),         # 9 -> clipped to a probability
    (1.0, 0.5, 1.0),         # g = 1 does not divide by zero
])
def test_unlabelled_weight_is_p_positive_given_unlabelled(g, c, expected):
    assert pu.unlabelled_positive_weights(np.array([g]), c)[0] == pytest.approx(expected)


def test_unlabelled_items_are_duplicated_with_complementary_weights():
    items = [Item([1, 5, 2], [1], [1.0], [0]), Item([1, 6, 2], [0], [1.0], [1]),
             Item([1, 7, 2], [0], [1.0], [2])]
    out = pu.pu_items(items, {0: 0.9, 1: 0.3, 2: 0.0})
    assert [(it.input_ids[1], it.labels, it.weights) for it in out] == [
        (5, [1], [1.0]),                        # labelled positive: once, weight 1 (its g score unused)
        (6, [1], [0.3]), (6, [0], [pytest.approx(0.7)]),
        (7, [1], [0.0]), (7, [0], [1.0]),
    ]
