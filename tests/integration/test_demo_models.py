"""The demo's best model, trained as ``make demo`` trains it (params.yaml's settings, the demo
dataset from the mirror), on a test split big enough to mean something, and its ``citeworth
predict`` scores spread: a plainly cite-worthy sentence ranks above plainly non-cite-worthy ones."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow
BEST_DEMO_MODEL = "solo"  # the best demo test F1 and ROC AUC (docs/researchers/demo-results.md)
CITE_WORTHY = ("Previous studies have shown that malaria transmission depends strongly on "
               "mosquito density and rainfall.")
NOT_CITE_WORTHY = ["The samples were centrifuged at 4,000 rpm for ten minutes at room temperature.",
                   "Table 2 lists the primers used in this study."]


@pytest.fixture(scope="module")
def demo_model(demo_dataset, cli):
    cli(demo_dataset, "run", "train", "-S", f"models=[{BEST_DEMO_MODEL}]")
    return demo_dataset


def test_the_demo_test_split_is_big_enough_for_table4(demo_model):
    test = json.loads((demo_model / f"metrics/models/{BEST_DEMO_MODEL}.json").read_text())["test"]
    assert test["sentences"] >= 300
    low, high = test["f1_ci"]
    assert low <= test["f1"]["mean"] <= high


def test_predict_ranks_a_plainly_cite_worthy_sentence_above_plain_ones(demo_model, cli):
    paragraphs = [arg for sentence in (CITE_WORTHY, *NOT_CITE_WORTHY) for arg in ("--text", sentence)]
    result = cli(demo_model, "predict", "--model", f"models/{BEST_DEMO_MODEL}", *paragraphs)
    scores = [json.loads(line)["score"] for line in result.stdout.splitlines()]
    assert len(scores) == 3
    assert scores[0] > max(scores[1:]) + 0.1, scores  # spread, not 0.52 +- 0.01 for everything
