"""The domain study: field splits and cells (no paper leakage), purity, ρ, and the stage end to end
on a small dataset this test writes (TF-IDF cells, a tiny encoder for the embeddings)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_jsonl
from citeworth.studies.domains.clusters import cluster_fields, cluster_purity, pearson
from citeworth.studies.domains.params import DomainsParams, EmbeddingParams
from citeworth.studies.domains.splits import (
    cell_data,
    field_parts,
    plan_cells,
    requested_cells,
    select_fields,
)
from citeworth.studies.domains.stage import domains

pytestmark = pytest.mark.usefixtures("torch_one_thread")

FIELDS = {"Biology": 5, "Physics": 4, "Computer Science": 3, "Economics": 2}  # papers per field
WORDS = {"Biology": "cells protein gene tissue", "Physics": "quantum field energy particle",
         "Computer Science": "algorithm network model data", "Economics": "market price trade"}


# The paths params.yaml gives (no defaults: dvc.yaml names them).
PATHS = dict(data_dir="data/citeworth", cells_dir="metrics/domains", metrics_path="metrics/domains.json",
             plots_dir="plots/domains", table_path="reports/table5.md")

def paragraph(field: str, paper: int, idx: int) -> dict:
    """A paragraph of two sentences: one cite-worthy ("prior work"), one not."""
    words = WORDS[field]
    samples = [
        {"text": f"Prior work on {words} was reported by several groups.", "label": "check-worthy",
         "original_text": "x", "ref_ids": [["b0"]], "citation_text": ["[1]"]},
        {"text": f"Here we measure {words} in sample {paper}.", "label": "non-check-worthy",
         "original_text": "x", "ref_ids": None, "citation_text": None},
    ]
    return {"paper_id": f"{field[:3]}-{paper}", "section_idx": idx, "section_title": "Introduction",
            "mag_field_of_study": [field], "original_text": " ".join(s["text"] for s in samples),
            "samples": samples, "source": "test", "release": "t", "shard": "s"}


def records() -> list[dict]:
    return [paragraph(f, p, i) for f, n in FIELDS.items() for p in range(n) for i in range(2)]


def papers(rows) -> set[str]:
    return {r["paper_id"] for r in rows}


def test_field_parts_split_each_field_by_paper():
    rows = records()
    fields = ["Biology", "Physics", "Computer Science"]
    parts = field_parts(rows, fields, [0.8, 0.1, 0.1], seed=1)
    for name in fields:
        split = {p: papers(parts[name][p]) for p in ("train", "dev", "test")}
        assert all(split.values()), f"{name}: every part needs a paper"
        assert sum(len(s) for s in split.values()) == len(set().union(*split.values()))  # disjoint
        assert set().union(*split.values()) == papers(r for r in rows if r["mag_field_of_study"] == [name])
        # A paper's paragraphs stay together.
        assert all(sum(r["paper_id"] == pid for r in parts[name][p]) == 2 for p in split for pid in split[p])
    assert field_parts(rows, fields, [0.8, 0.1, 0.1], seed=1) == parts  # deterministic


def test_in_domain_cells_test_on_the_field_test_part_and_out_of_domain_on_all_of_the_target():
    rows = records()
    parts = field_parts(rows, ["Biology", "Physics", "Computer Science"], [0.8, 0.1, 0.1], seed=1)
    own = cell_data(parts, "Biology", "Biology")
    assert own["test"] == parts["Biology"]["test"]
    assert own["train"] == parts["Biology"]["train"] and own["dev"] == parts["Biology"]["dev"]
    cross = cell_data(parts, "Biology", "Physics")
    assert cross["train"] == parts["Biology"]["train"]
    assert papers(cross["test"]) == {r["paper_id"] for r in rows if r["mag_field_of_study"] == ["Physics"]}
    for cell in (own, cross):
        assert not (papers(cell["train"]) | papers(cell["dev"])) & papers(cell["test"])


def test_a_paper_in_two_fields_is_reported_as_leakage():
    rows = records()
    parts = field_parts(rows, ["Biology", "Physics"], [0.8, 0.1, 0.1], seed=1)
    intruder = dict(parts["Biology"]["train"][0], mag_field_of_study=["Physics"])
    parts["Physics"]["test"].append(intruder)
    with pytest.raises(StageFailed, match="papers in both training and test"):
        cell_data(parts, "Biology", "Physics")


def test_fields_and_cells_selection():
    rows = records()
    # Economics has 2 papers: too few to split train/dev/test.
    assert select_fields(rows, DomainsParams(**PATHS)) == ["Biology", "Computer Science", "Physics"]
    with pytest.raises(StageFailed, match="fewer than 3 papers"):
        select_fields(rows, DomainsParams(**PATHS, fields=["Biology", "Economics"]))
    with pytest.raises(StageFailed, match="at least 4 fields"):
        select_fields(rows, DomainsParams(**PATHS, min_fields=4))
    fields = ["Biology", "Computer Science", "Physics"]
    assert len(requested_cells("all", fields)) == 9
    assert requested_cells([["computer_science", "Biology"]], fields) == [("Computer Science", "Biology")]
    with pytest.raises(StageFailed, match="not among"):
        requested_cells([["Biology", "Economics"]], fields)


def test_cluster_purity_on_a_constructed_case():
    labels = ["a", "a", "a", "b", "b", "b"]
    assert cluster_purity(labels, [0, 0, 0, 1, 1, 1]) == 1.0
    assert cluster_purity(labels, [1, 1, 1, 0, 0, 0]) == 1.0  # cluster ids are arbitrary
    assert cluster_purity(labels, [0, 0, 1, 1, 1, 1]) == pytest.approx(5 / 6)
    assert cluster_purity(labels, [0, 0, 0, 0, 0, 0]) == pytest.approx(3 / 6)


def test_gaussian_mixture_recovers_separated_fields_and_their_distances():
    rng = np.random.default_rng(0)
    centres = {"A": np.zeros(8), "B": np.full(8, 10.0), "C": np.r_[np.full(4, -10.0), np.zeros(4)]}
    vectors = np.vstack([c + rng.normal(scale=0.5, size=(40, 8)) for c in centres.values()])
    labels = [name for name in centres for _ in range(40)]
    result = cluster_fields(vectors, labels, list(centres), EmbeddingParams(cluster_dims=8, seed=1))
    assert result["purity"] == 1.0
    d = result["distances"]
    assert d["A"]["A"] == 0 and d["A"]["B"] == d["B"]["A"]
    assert d["A"]["C"] < d["A"]["B"]  # |C - A| = 20, |B - A| = 28.3
    assert d["A"]["B"] == pytest.approx(np.linalg.norm(centres["A"] - centres["B"]), rel=0.05)


def test_pearson():
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert pearson([1, 1, 1], [1, 2, 3]) is None


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    """A 2-layer BERT with the embedded encoder's vocabulary: fast embeddings."""
    import torch
    from transformers import BertConfig, BertModel

    from citeworth.models.encoders import load_tokenizer

    directory = tmp_path_factory.mktemp("tiny_encoder")
    tokenizer = load_tokenizer("embedded")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=64)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def test_stage_runs_cells_one_at_a_time_then_aggregates(tmp_path, tiny_encoder, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = records()
    for i, split in enumerate(("train", "dev", "test")):
        write_jsonl(tmp_path / f"data/citeworth/{split}.jsonl", rows[i::3])
    params = dict(model={"kind": "tfidf_lr"}, embedding=EmbeddingParams(encoder=tiny_encoder, cluster_dims=4),
                  **PATHS)

    planned = plan_cells(DomainsParams(**params))
    assert len(planned) == 9 and planned[1] == ["biology", "computer_science"]
    one = domains(DomainsParams(cells=[planned[2]], aggregate=False, **params))
    assert one["cells_run"] == 1
    assert [p.name for p in (tmp_path / "metrics/domains").iterdir()] == ["biology__physics.json"]
    cell = json.loads((tmp_path / "metrics/domains/biology__physics.json").read_text())
    assert cell["in_domain"] is False and cell["data"]["test"]["papers"] == FIELDS["Physics"]
    with pytest.raises(StageFailed, match="8 cell\\(s\\) not run yet"):
        domains(DomainsParams(cells=[], **params))

    everything = domains(DomainsParams(**params))
    assert everything["cells_run"] == 8 and everything["cells_current"] == 1  # the Biology model is cached
    metrics = json.loads((tmp_path / "metrics/domains.json").read_text())
    assert metrics["fields"] == ["Biology", "Computer Science", "Physics"]
    assert set(metrics["sigma"]) == set(metrics["rho"]) == set(metrics["fields"])
    assert 0 < metrics["clusters"]["purity"] <= 1
    table = (tmp_path / "reports/table5.md").read_text()
    assert "| B | " in table and "| σ |" in table and "| ρ |" in table
    for image in ("heatmap.png", "pca.png"):
        assert (tmp_path / "plots/domains" / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    before = {p: p.read_bytes() for p in [tmp_path / "metrics/domains.json", tmp_path / "reports/table5.md"]}
    again = domains(DomainsParams(**params))
    assert again["cells_run"] == 0
    assert all(p.read_bytes() == content for p, content in before.items())


def test_cached_field_models_are_retrained_after_a_change_under_models(tmp_path, monkeypatch, edit_code):
    """The trained-model cache lives outside DVC's outputs, so its own fingerprint must cover the code."""
    from citeworth.studies.domains import cells

    monkeypatch.chdir(tmp_path)
    rows = records()
    for i, split in enumerate(("train", "dev", "test")):
        write_jsonl(tmp_path / f"data/citeworth/{split}.jsonl", rows[i::3])
    fits: list[str] = []
    real_fit = cells.fit_model
    monkeypatch.setattr(cells, "fit_model", lambda spec, train, *rest, **kw: fits.append(train[0]["paper_id"])
                        or real_fit(spec, train, *rest, **kw))
    params = DomainsParams(**PATHS, model={"kind": "tfidf_lr"},
                           cells=[["biology", "biology"], ["biology", "physics"]], aggregate=False)

    assert domains(params)["cells_run"] == 2 and len(fits) == 1  # one Biology model for both cells
    assert domains(params)["cells_run"] == 0 and len(fits) == 1  # nothing changed: current

    def rerun_as_dvc_does() -> dict:  # a dvc.yaml dep changed: DVC removes the outs, then runs the stage
        shutil.rmtree(tmp_path / "metrics/domains")
        return domains(params)

    assert rerun_as_dvc_does()["cells_run"] == 2 and len(fits) == 1  # same code: the cached model serves
    edit_code("studies/domains/tables.py")  # Table 5's formatting: no cell's code
    edit_code("report/stage.py")  # Table 4's
    assert domains(params)["cells_run"] == 0 and len(fits) == 1  # every cell current
    edit_code("models/tfidf.py")
    assert rerun_as_dvc_does()["cells_run"] == 2 and len(fits) == 2  # retrained, not the old code's model
    assert domains(params)["cells_run"] == 0 and len(fits) == 2


def test_subjects_group_papers_and_the_largest_by_training_sentences_are_chosen():
    """group_by: subject reads the record's subject (paragraphs without one are left out);
    min_train_sentences and max_fields pick the subjects with the most training sentences."""
    subjects = {"Biology": "Neuroscience", "Physics": "Neuroscience", "Computer Science": "Ecology",
                "Economics": None}
    rows = [dict(r, subject=subjects[r["mag_field_of_study"][0]]) for r in records()]
    params = DomainsParams(**PATHS, group_by="subject", min_fields=2)
    assert select_fields(rows, params) == ["Ecology", "Neuroscience"]
    # Neuroscience: 9 papers -> 7 train papers x 2 paragraphs x 2 sentences; Ecology: 3 -> 1 x 4
    largest = DomainsParams(**PATHS, group_by="subject", min_fields=1, max_fields=1)
    assert select_fields(rows, largest) == ["Neuroscience"]
    with pytest.raises(StageFailed, match="at least 2 subjects"):
        select_fields(rows, DomainsParams(**PATHS, group_by="subject", min_fields=2, min_train_sentences=5))


def test_out_of_domain_cells_may_test_on_the_target_test_part_only():
    parts = field_parts(records(), ["Biology", "Physics"], [0.8, 0.1, 0.1], seed=1)
    cross = cell_data(parts, "Biology", "Physics", out_of_domain_test="test")
    assert cross["test"] == cell_data(parts, "Physics", "Physics")["test"] == parts["Physics"]["test"]
