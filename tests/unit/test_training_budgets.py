"""Training budgets: a seeded sample of whole paragraphs (max_train_sentences), nested across sizes,
and the dev sample a fit stops early on."""

from __future__ import annotations

from citeworth.models import data
from citeworth.models.fitting import dev_sample, fit_model, model_spec
from citeworth.models.spec import TfidfSpec


def paragraphs(n: int) -> list[dict]:
    """Paragraph i holds i % 3 + 1 sentences; every third sentence is cite-worthy."""
    return [{"paper_id": f"p{i}", "samples": [
        {"text": f"Sentence {j} of paragraph {i} about topic {i % 5}.",
         "label": "check-worthy" if (i + j) % 3 == 0 else "non-check-worthy"} for j in range(i % 3 + 1)]}
        for i in range(n)]


def test_a_sample_keeps_whole_paragraphs_in_dataset_order_until_the_budget():
    records = paragraphs(60)
    sample = data.sample_paragraphs(records, 30, seed=1)
    sizes = [len(r["samples"]) for r in sample]
    assert 30 <= sum(sizes) < 30 + 3  # the paragraph that reaches the budget is kept whole
    assert [records.index(r) for r in sample] == sorted(records.index(r) for r in sample)
    assert data.sample_paragraphs(records, 30, seed=1) == sample  # seeded
    assert data.sample_paragraphs(records, 30, seed=2) != sample


def test_smaller_samples_lie_inside_larger_ones_and_a_large_budget_keeps_everything():
    records = paragraphs(60)
    ids = [{r["paper_id"] for r in data.sample_paragraphs(records, size, seed=1)} for size in (10, 20, 40)]
    assert ids[0] <= ids[1] <= ids[2]
    assert data.sample_paragraphs(records, 10_000, seed=1) is records
    assert data.sample_paragraphs(records, None, seed=1) is records


def test_a_fit_reports_the_sentences_it_trained_on_and_the_dev_sample_is_the_budgets():
    spec = model_spec("lr", TfidfSpec(kind="tfidf_lr", max_train_sentences=25, max_dev_sentences=8))
    train, dev = paragraphs(60), paragraphs(30)
    trained = fit_model(spec, train, dev, seed=1, out_dir=None)
    expected = data.sample_paragraphs(train, 25, seed=1)
    assert trained.stats["train_sentences"] == len(data.sentences(expected))
    assert trained.stats["train_paragraphs"] == len(expected)
    dev_sentences = len(data.sentences(dev_sample(spec, dev, 1)))
    assert 8 <= dev_sentences < 8 + 3
