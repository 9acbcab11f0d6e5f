"""Downstream task readers on the real SciBERT benchmark files (through CITEWORTH_MIRROR), the
sub-word alignment of NER tags, and the metrics."""

from __future__ import annotations

import json

import pytest

from citeworth.studies.transfer.downstream import TagAdapter, score
from citeworth.studies.transfer.tasks import (
    KNOWN_TASKS,
    TaggedSentence,
    TaskSpec,
    load_task,
    read_conll,
    read_labelled_text,
    resolve_task,
    subsample,
)

SCIBERT = "github/allenai/scibert/data"
# Labels of the standard train splits, as the files have them.
CLASS_LABELS = {
    "sci-cite": {"background", "method", "result"},
    "citation_intent": {"Background", "Uses", "CompareOrContrast", "Motivation", "Extends", "Future"},
    "sciie-relation-extraction": {"USED-FOR", "CONJUNCTION", "EVALUATE-FOR", "HYPONYM-OF", "PART-OF",
                                  "FEATURE-OF", "COMPARE"},
}


@pytest.fixture(scope="module")
def root(mirror):
    return mirror / SCIBERT


@pytest.mark.parametrize("name", ["sci-cite", "citation_intent", "chemprot", "sciie-relation-extraction"])
def test_classification_files_read_whole(root, name):
    folder = root / KNOWN_TASKS[name].path
    for split in ("train", "dev", "test"):
        path = folder / f"{split}.txt"
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        examples = list(read_labelled_text(path))
        assert [(e.text, e.label) for e in examples] == [(r["text"], r["label"]) for r in lines]
    if name in CLASS_LABELS:
        assert {e.label for e in read_labelled_text(folder / "train.txt")} == CLASS_LABELS[name]


@pytest.mark.parametrize("name, tags, first_tokens", [
    ("NCBI-disease", {"B-Disease", "I-Disease", "O"}, ["Identification", "of", "APC2"]),
    ("bc5cdr", {"B-Entity", "I-Entity", "O"}, ["Naloxone", "reverses", "the"]),
    ("sciie", None, ["English", "is", "shown"]),
])
def test_conll_files_become_sentences(root, name, tags, first_tokens):
    path = root / KNOWN_TASKS[name].path / "train.txt"
    sentences = list(read_conll(path))
    token_lines = [line for line in path.read_text(encoding="utf-8").splitlines()
                   if line.split() and not line.startswith("-DOCSTART-")]
    assert sum(len(s.tokens) for s in sentences) == len(token_lines)
    assert all(len(s.tokens) == len(s.tags) > 0 for s in sentences)
    assert list(sentences[0].tokens[:3]) == first_tokens
    assert not any("-DOCSTART-" in s.tokens for s in sentences)
    found = {t for s in sentences for t in s.tags}
    types = {t.split("-", 1)[-1] for t in found}
    assert found == tags if tags else types >= {"Method", "Task", "Material", "O"}


def test_load_task_subsets_deterministically_and_keeps_all_labels(root):
    spec = TaskSpec("citation_intent", max_train=50, max_dev=20)
    data = load_task(root, spec)
    assert [len(data.splits[s]) for s in ("train", "dev", "test")] == [50, 20, 139]
    assert load_task(root, spec).splits == data.splits
    full = list(read_labelled_text(root / KNOWN_TASKS["citation_intent"].path / "train.txt"))
    remaining = iter(full)
    assert all(ex in remaining for ex in data.splits["train"])  # a subsequence: file order kept
    assert set(data.labels) >= {ex.label for split in data.splits.values() for ex in split}


def test_unknown_tasks_need_their_fields_and_missing_files_are_reported(tmp_path, root):
    with pytest.raises(ValueError, match="not a known task"):
        resolve_task(TaskSpec("my-task"))
    assert resolve_task(TaskSpec("chemprot")).metric == "micro_f1"
    with pytest.raises(FileNotFoundError, match="run the download stage"):
        load_task(tmp_path, TaskSpec("sci-cite"))
    assert subsample(list(range(10)), None, "k") == list(range(10))


def test_tags_align_to_first_subwords_and_truncated_words_get_no_row():
    from citeworth.models.encoders import load_tokenizer

    tokenizer = load_tokenizer("embedded")
    sentence = TaggedSentence(("Naloxone", "reverses", "hypertension", "."), ("B-X", "O", "B-X", "O"))
    tag_ids = {"B-X": 0, "I-X": 1, "O": 2}
    item, = TagAdapter(tokenizer, 64, tag_ids).items([sentence])
    tokens = tokenizer.convert_ids_to_tokens(item.input_ids)
    assert [tokens[p] for p in item.extra["positions"]] == [tokenizer.tokenize(w)[0] for w in sentence.tokens]
    assert len(item.input_ids) > len(sentence.tokens) + 2  # some words have several sub-words
    assert item.labels == [0, 2, 0, 2] and item.index == [0, 1, 2, 3]
    short, = TagAdapter(tokenizer, 4, tag_ids).items([sentence])  # [CLS] + 3 sub-words + [SEP]
    assert len(short.labels) < 4 and short.index == list(range(len(short.labels)))
    batch = TagAdapter(tokenizer, 64, tag_ids).collate([item, short])
    assert batch.select.sum().item() == len(item.labels) + len(short.labels)


def test_metrics():
    gold = [["B-Disease", "I-Disease", "O", "I-Entity"]]  # IOB1: an I- tag opens a span
    assert score("span_f1", gold, gold) == 1.0
    assert score("span_f1", gold, [["B-Disease", "O", "O", "I-Entity"]]) == pytest.approx(0.5)
    assert score("macro_f1", ["a", "a", "b"], ["a", "a", "a"]) == pytest.approx((0.8 + 0) / 2)
    assert score("micro_f1", ["a", "a", "b"], ["a", "a", "a"]) == pytest.approx(2 / 3)
