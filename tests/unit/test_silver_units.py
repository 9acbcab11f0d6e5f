"""The silver corpus' parts: sentences and their citations, the cutoff, the balance, the metrics."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, matthews_corrcoef

from citeworth.core.errors import StageFailed
from citeworth.core.io import read_jsonl
from citeworth.corpora.paper_index import IndexedPaper
from citeworth.corpora.silver.balance import balanced
from citeworth.corpora.silver.cutoff import grid, load_gold, tune
from citeworth.corpora.silver.labelling import write_pairs
from citeworth.corpora.silver.pairs import Sentence, body_sentences, cited_entries, cited_sentences
from citeworth.corpora.silver.params import CutoffParams, SimilarityParams
from citeworth.corpora.silver.similarity import Embedder, Vectors, quantise
from citeworth.corpora.silver.store import Citing, Store
from citeworth.models.evaluation import binary_metrics
from citeworth.text.sentences import SentenceSplitter


@pytest.fixture(scope="module")
def split():
    return SentenceSplitter().split


def test_sentences_lose_their_citations_and_keep_what_each_marker_cites(split):
    text = "Frozen RNA lasts [1]. SymPy{{cite:b2}} provides algebra, and NumPy [2, 3] arrays. Plain end."
    spans = [[text.index("[1]"), text.index("[1]") + 3, ["b1"]],
             [text.index("{{"), text.index("}}") + 2, ["b2"]],
             [text.index("[2, 3]"), text.index("[2, 3]") + 6, ["b2", "b3"]]]
    assert list(body_sentences([[text, spans]], split)) == [
        Sentence("Frozen RNA lasts.", (("b1",),)),
        Sentence("SymPy provides algebra, and NumPy arrays.", (("b2",), ("b2", "b3"))),
        Sentence("Plain end.", ())]


def test_a_citing_sentence_cites_resolved_entries_only(split):
    bibliography = {"b1": {}, "b2": {}}
    assert cited_entries(Sentence("x", (("b1",), ("b1",))), bibliography, 1) == (["b1"], None)
    assert cited_entries(Sentence("x", (("b1",), ("b2",))), bibliography, 1) == ([], "too_many_citations")
    assert cited_entries(Sentence("x", (("b1",), ("b2",))), bibliography, 2) == (["b1", "b2"], None)
    assert cited_entries(Sentence("x", (("b1",), ())), bibliography, 2) == ([], "unresolved_citation")
    assert cited_entries(Sentence("x", (("b9",),)), bibliography, 2) == ([], "unresolved_citation")
    assert cited_entries(Sentence("x", ()), bibliography, 2) == ([], "no_citation")


def test_a_cited_paper_gives_its_full_text_else_its_abstract(split):
    full = IndexedPaper(1, "s", "p", "T", "An abstract.", [["Body one. Body two.", []]], {})
    assert cited_sentences(full, split) == ("full_text", [Sentence("Body one."), Sentence("Body two.")])
    bare = IndexedPaper(2, "s", "q", "T", "First claim here. Second claim here.", None, None)
    assert cited_sentences(bare, split) == ("abstract", [Sentence("First claim here."),
                                                          Sentence("Second claim here.")])


def test_the_negatives_drawn_depend_on_the_seed_and_sentence_only():
    labels = np.array([1, 0, 0, 1, 0, 0, 0, 0, 1, 0])
    kept = balanced(labels, 1, "paper#s1")
    assert list(labels[kept]).count(1) == list(labels[kept]).count(0) == 3
    assert set(np.flatnonzero(labels == 1)) <= set(kept)  # every positive
    assert np.array_equal(kept, balanced(labels, 1, "paper#s1"))  # however often or in whichever order
    draws = {tuple(balanced(labels, seed, sid)) for seed in (1, 2) for sid in ("paper#s1", "paper#s2")}
    assert len(draws) > 1


def test_with_fewer_negatives_than_positives_as_many_positives_are_drawn():
    labels = np.array([1, 1, 1, 0])
    kept = balanced(labels, 1, "x")
    assert len(kept) == 2 and sorted(labels[kept]) == [0, 1]
    assert len(balanced(np.array([1, 1]), 1, "x")) == 0 and len(balanced(np.array([0, 0]), 1, "x")) == 0


def test_cosines_are_rounded_to_exact_units():
    vectors = Vectors(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]))
    assert quantise(vectors.cosines(0, [1, 2]), 4).tolist() == [6000, 0]
    assert quantise(np.array([0.45004999, 0.45005001, -0.3]), 4).tolist() == [4500, 4501, -3000]


def test_the_cutoff_maximises_mcc_then_balanced_accuracy_then_is_the_lower_one():
    cutoffs = grid(CutoffParams(start=0.3, stop=0.6, step=0.1), 2)
    assert cutoffs == [30, 40, 50, 60]
    scores, labels = np.array([55, 45, 35, 20]), np.array([1, 1, 0, 0])
    chosen, rows = tune(scores, labels, cutoffs, 2)
    assert chosen["cutoff"] == 0.4 and chosen["mcc"] == 1.0  # 0.4 separates perfectly
    assert [row["cutoff"] for row in rows] == [0.3, 0.4, 0.5, 0.6]
    chosen, _ = tune(np.array([55, 56, 20, 21]), labels, cutoffs, 2)
    assert chosen["cutoff"] == 0.3  # 0.3, 0.4 and 0.5 tie on everything: the lowest wins
    with pytest.raises(StageFailed, match="step > 0"):
        grid(CutoffParams(start=0.5, stop=0.4, step=0.1), 2)


def test_binary_metrics_are_sklearn_s():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    metrics = binary_metrics(y, p)
    assert metrics["mcc"] == round(matthews_corrcoef(y, p), 6)
    assert metrics["balanced_accuracy"] == round(balanced_accuracy_score(y, p), 6)
    assert metrics["tp"] + metrics["fp"] + metrics["tn"] + metrics["fn"] == 200
    assert binary_metrics(np.array([0, 0]), np.array([0, 0]))["mcc"] == 0.0  # undefined -> 0


@pytest.mark.parametrize(("line", "error"), [
    ("dev\td1\tA claim.\tA sentence.", "5 non-empty"),
    ("train\td1\tA claim.\tA sentence.\t4", "split 'train'"),
    ("dev\td1\tA claim.\tA sentence.\t6", "score '6'"),
    ("dev\td1\tA claim.\t \t3", "non-empty"),
])
def test_a_malformed_gold_line_is_named(tmp_path, line, error):
    path = tmp_path / "gold.tsv"
    path.write_text("split\tciting_id\tciting\tcited\tscore\ndev\td0\tOk.\tFine.\t5\n" + line + "\n")
    with pytest.raises(StageFailed, match=rf"gold.tsv:3: .*{error}"):
        load_gold(path)


def test_the_gold_file_needs_its_header_and_dev_pairs(tmp_path):
    path = tmp_path / "gold.tsv"
    path.write_text("citing\tcited\tscore\n")
    with pytest.raises(StageFailed, match="header"):
        load_gold(path)
    path.write_text("split\tciting_id\tciting\tcited\tscore\ntest\tt1\tA.\tB.\t4\n")
    with pytest.raises(StageFailed, match="no dev pairs"):
        load_gold(path)


def test_each_citing_sentence_is_scored_against_every_cited_sentence_and_balanced(tmp_path):
    store = Store(tmp_path / "pairs.sqlite")
    unit = {"citing": [1.0, 0.0], "near": [0.8, 0.6], "nearer": [0.96, 0.28], "far": [0.0, 1.0],
            "farther": [-0.6, 0.8], "other": [0.6, -0.8]}
    rows = {text: store.text_row(text) for text in unit}
    vectors = Vectors(np.array([unit[text] for text in store.texts()]))
    for rowid, texts in ((1, ["near", "far"]), (2, ["nearer", "farther", "other"])):
        paper = IndexedPaper(rowid, "s", f"cited{rowid}", None, None, None, None)
        store.add_cited(paper, "full_text", [(i, t.upper(), rows[t]) for i, t in enumerate(texts)])
    for split, ref, cited in (("train", "b1", 1), ("train", "b2", 2), ("test", "b1", 1)):
        citing_id = f"s/{split}#s0"
        store.add_citing(Citing(citing_id, split, "s", split, "CITING", rows["citing"], ref, cited))
    counts: Counter = Counter()
    write_pairs(store, vectors, store.texts(), tmp_path, 7000, 4, 1, counts)  # cutoff 0.7
    assert counts["pairs_scored"] == 5 + 2 and counts["pairs_positive"] == 2 + 1
    train = list(read_jsonl(tmp_path / "train.jsonl"))
    assert sorted((p["cited_text"], p["label"], p["score"]) for p in train if p["label"]) == [
        ("near", 1, 0.8), ("nearer", 1, 0.96)]
    assert [p["label"] for p in train].count(0) == 2 and counts["pairs_train"] == 4
    assert {p["cited_paper_id"] for p in train} <= {"cited1", "cited2"}
    assert train[0]["citing_original"] == "CITING" and train[0]["citing_text"] == "citing"
    assert [(p["cited_text"], p["label"]) for p in read_jsonl(tmp_path / "test.jsonl")] == [("near", 1),
                                                                                          ("far", 0)]
    assert (tmp_path / "dev.jsonl").read_text() == ""


def test_embeddings_are_computed_once_per_text_and_cached_by_encoder_and_text(tmp_path, monkeypatch):
    computed: list[str] = []

    def fake_embed(texts):  # a vector per text from its length; records what was computed
        computed.extend(texts)
        vectors = np.array([[len(text), 1.0, 0.0] for text in texts])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def embedder(key: str) -> Embedder:
        made = Embedder(SimilarityParams(cache_dir=tmp_path / "cache"))
        made.key = key  # as if the encoder's files (or the embedding code) differed
        monkeypatch.setattr(made, "embed", fake_embed)
        encoder = SimpleNamespace(config=SimpleNamespace(hidden_size=3))
        monkeypatch.setattr(made, "_load", lambda: (encoder, None))
        return made

    first, _ = embedder("encoder-a").vectors(["one text", "another text"], tmp_path / "a.f32")
    again, facts = embedder("encoder-a").vectors(["another text", "a third text"], tmp_path / "b.f32")
    assert computed == ["one text", "another text", "a third text"]  # "another text" came from the cache
    assert np.array_equal(again.matrix[0], first.matrix[1]) and facts["texts"] == 2
    embedder("encoder-b").vectors(["one text"], tmp_path / "c.f32")
    assert computed[-1] == "one text"  # another encoder's vectors are not reused
