"""The transfer stage end to end at toy scale: a 2-layer BERT, a small CiteWorth-shaped dataset this
test writes, and the real benchmark files (tiny subsets, through CITEWORTH_MIRROR)."""

from __future__ import annotations

import json

import pytest

from citeworth.core.io import write_jsonl
from citeworth.models.spec import OptimParams
from citeworth.studies.transfer.params import DownstreamParams, FineTuneParams, PretrainParams, TransferParams
from citeworth.studies.transfer.stage import transfer
from citeworth.studies.transfer.tasks import TaskSpec

pytestmark = pytest.mark.usefixtures("torch_one_thread")

SENTENCES = [("Prior studies reported the same effect in mice.", "check-worthy"),
             ("We measured the signal at three temperatures.", "non-check-worthy"),
             ("This approach follows the protocol of earlier work.", "check-worthy"),
             ("Figure two shows the resulting spectra for each sample.", "non-check-worthy")]


def dataset(directory, n_paragraphs: int) -> None:
    for split in ("train", "dev"):
        rows = [{"paper_id": f"{split}{i}", "section_idx": 0, "section_title": "Introduction",
                 "mag_field_of_study": ["Biology"], "original_text": "",
                 "samples": [{"text": text, "label": label} for text, label in SENTENCES]}
                for i in range(n_paragraphs)]
        write_jsonl(directory / f"{split}.jsonl", rows)


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from citeworth.models.encoders import load_tokenizer

    directory = tmp_path_factory.mktemp("tiny_bert")
    tokenizer = load_tokenizer("embedded")
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                               num_attention_heads=2, intermediate_size=64)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def test_transfer_stage(tmp_path, monkeypatch, tiny_encoder, mirror, edit_code):
    monkeypatch.chdir(tmp_path)
    dataset(tmp_path / "data/citeworth", n_paragraphs=6)
    quick = OptimParams(batch_size=8, epochs=1, lr=1e-3, warmup_steps=0, max_steps=3)
    params = TransferParams(
        encoder=tiny_encoder, data_dir="data/citeworth", models_dir="models/transfer",
        runs_dir="metrics/transfer", metrics_path="metrics/transfer.json", table_path="reports/table6.md",
        pretrain=PretrainParams(max_length=32, max_sentences=16, optim=quick),
        downstream=DownstreamParams(
            data_root=mirror / "github/allenai/scibert/data",
            tasks=[TaskSpec("citation_intent", max_train=16, max_dev=8, max_test=8),
                   TaskSpec("NCBI-disease", max_train=16, max_dev=8, max_test=8)],
            seeds=[1, 2], finetune=FineTuneParams(max_length=32, optim=quick)),
    )
    summary = transfer(params)
    assert set(summary["average"]) == {"Base", "LM", "Cite", "LMCite"}

    for variant in ("LM", "Cite", "LMCite"):
        info = json.loads((tmp_path / f"models/transfer/{variant}/citeworth_transfer.json").read_text())
        assert info["steps"] == 2 and info["train_sentences"] == 16  # 16 sentences, batches of 8
        assert ("mlm_loss" in info["dev"]) == (variant != "Cite")
        assert ("cite" in info["dev"]) == (variant != "LM")
        assert (tmp_path / f"models/transfer/{variant}/README.md").exists()
    metrics = json.loads((tmp_path / "metrics/transfer.json").read_text())
    assert metrics["tasks"]["citation_intent"]["metric"] == "macro_f1"
    assert metrics["tasks"]["NCBI-disease"]["metric"] == "span_f1"
    for task in metrics["tasks"].values():
        assert task["test_items"] == 8  # max_test
        for stats in task["test"].values():
            assert stats["n"] == 2 and 0 <= stats["mean"] <= 1
    runs = sorted(p.name for p in (tmp_path / "metrics/transfer/NCBI-disease").iterdir())
    assert runs == sorted(f"{v}-seed{s}.json" for v in ("Base", "LM", "Cite", "LMCite") for s in (1, 2))
    table = (tmp_path / "reports/table6.md").read_text()
    assert "| ACL-ARC (CLS) | macro_f1 |" in table and "| Average |" in table and "±" in table

    # A rerun with the same params redoes nothing and rewrites the same bytes.
    outputs = [tmp_path / "metrics/transfer.json", tmp_path / "reports/table6.md",
               tmp_path / "models/transfer/LMCite/model.safetensors"]
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in outputs}
    transfer(params)
    assert all(p.read_bytes() == before[p][0] for p in outputs)
    assert outputs[2].stat().st_mtime_ns == before[outputs[2]][1]  # not retrained

    # A change to the study's code redoes the variants and runs it reaches (here one of each kind).
    from citeworth.studies.transfer import pretrain, stage

    redone: list[str] = []
    for module, name in ((pretrain, "train_variant"), (stage, "fine_tune")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: redone.append(_name)
                            or _real(*a, **k))
    subset = params.model_copy(update={"variants": ["Cite"], "downstream": params.downstream.model_copy(
        update={"tasks": params.downstream.tasks[:1], "seeds": [1]})})
    transfer(subset)
    assert redone == []  # unchanged: every result reused
    edit_code("studies/transfer/downstream.py")
    transfer(subset)
    assert redone == ["train_variant", "fine_tune", "fine_tune"]  # Cite; Base and Cite on one task
