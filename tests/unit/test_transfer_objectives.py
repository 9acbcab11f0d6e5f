"""CiteBERT's objectives: the MLM term on masked positions equals the model's own MLM loss, LMCite's
loss is the sum of both terms (values and gradients), and the exported variant reloads."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModel, AutoModelForMaskedLM, BertConfig, BertForMaskedLM

from citeworth.models import loop
from citeworth.models.encoders import load_tokenizer
from citeworth.studies.transfer.params import PretrainParams
from citeworth.studies.transfer.pretrain import (
    CITE_HEAD_FILE,
    INFO_FILE,
    OBJECTIVES,
    CiteBert,
    Masker,
    collate,
    export,
    model_card,
    objective_losses,
)

pytestmark = pytest.mark.usefixtures("torch_one_thread")

SENTENCES = [("Prior studies reported the same effect in mice.", 1),
             ("We measured the signal at three temperatures.", 0),
             ("The method follows the standard protocol of earlier work.", 1),
             ("Figure two shows the resulting spectra for each sample.", 0)]


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer("embedded")


def tiny_model(tokenizer) -> CiteBert:
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    return CiteBert(BertForMaskedLM(config), dropout=0.0)


def a_batch(tokenizer, probability: float = 0.3):
    ids = tokenizer([t for t, _ in SENTENCES])["input_ids"]
    items = [loop.Item(ids[i], [label], [1.0], [i]) for i, (_, label) in enumerate(SENTENCES)]
    return collate(items, tokenizer.pad_token_id, Masker(tokenizer, probability, seed=3))


def test_masking_touches_only_real_tokens_and_labels_them(tokenizer):
    batch = a_batch(tokenizer)
    masked = batch.mlm_labels != -100
    assert masked.any()
    assert torch.equal(batch.mlm_labels[masked], batch.input_ids[masked])
    special = torch.isin(batch.input_ids, torch.tensor(tokenizer.all_special_ids))
    assert not (masked & special).any()
    assert torch.equal(batch.masked_ids[~masked], batch.input_ids[~masked])
    assert torch.equal(a_batch(tokenizer).masked_ids, batch.masked_ids)  # seeded: the same masks again


def test_mlm_term_equals_the_masked_lm_models_own_loss(tokenizer):
    model, batch = tiny_model(tokenizer), a_batch(tokenizer)
    ours = objective_losses(model, batch, OBJECTIVES["LM"], PretrainParams())
    theirs = model.mlm(input_ids=batch.masked_ids, attention_mask=batch.attention_mask,
                       labels=batch.mlm_labels).loss
    assert set(ours) == {"mlm", "total"}
    assert ours["mlm"].item() == pytest.approx(theirs.item(), rel=1e-5)


def grads(model, loss) -> dict[str, torch.Tensor]:
    model.zero_grad()
    loss.backward(retain_graph=True)
    return {n: torch.zeros_like(p) if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}


def test_lmcite_loss_is_the_sum_of_both_terms_values_and_gradients(tokenizer):
    model, batch = tiny_model(tokenizer), a_batch(tokenizer)
    losses = objective_losses(model, batch, OBJECTIVES["LMCite"], PretrainParams())
    assert set(losses) == {"mlm", "cite", "total"}
    assert losses["mlm"].item() > 0 and losses["cite"].item() > 0
    assert losses["total"].item() == pytest.approx(losses["mlm"].item() + losses["cite"].item(), rel=1e-6)
    g_total, g_mlm, g_cite = (grads(model, losses[k]) for k in ("total", "mlm", "cite"))
    for name in g_total:
        torch.testing.assert_close(g_total[name], g_mlm[name] + g_cite[name], rtol=1e-5, atol=1e-7)
    # Each term trains its own head and both reach the shared encoder.
    assert g_cite["cite_head.classifier.weight"].abs().sum() > 0
    assert g_mlm["cite_head.classifier.weight"].abs().sum() == 0
    assert g_mlm["mlm.cls.predictions.transform.dense.weight"].abs().sum() > 0
    assert g_cite["mlm.cls.predictions.transform.dense.weight"].abs().sum() == 0
    layer = "mlm.bert.encoder.layer.0.attention.self.query.weight"
    assert g_mlm[layer].abs().sum() > 0 and g_cite[layer].abs().sum() > 0


def test_cite_reads_the_unmasked_sentence_and_weights_apply(tokenizer):
    model, batch = tiny_model(tokenizer), a_batch(tokenizer)
    cite = objective_losses(model, batch, OBJECTIVES["Cite"], PretrainParams())
    assert set(cite) == {"cite", "total"}
    logits = model.cite_logits(model.encode(batch.input_ids, batch.attention_mask))
    expected = torch.nn.functional.cross_entropy(logits, batch.cite_labels)
    assert cite["cite"].item() == pytest.approx(expected.item(), rel=1e-6)
    params = PretrainParams(mlm_weight=0.5, cite_weight=2.0)
    weighted = objective_losses(model, batch, OBJECTIVES["LMCite"], params)
    expected = 0.5 * weighted["mlm"].item() + 2 * weighted["cite"].item()
    assert weighted["total"].item() == pytest.approx(expected, rel=1e-6)


def test_export_reloads_with_auto_classes(tokenizer, tmp_path):
    model = tiny_model(tokenizer)
    info = {"variant": "LMCite", "fingerprint": "f" * 16, "base_encoder": "tiny", "train_sentences": 4,
            "steps": 1, "train_loss": {"first": 1.0, "last": 0.5}, "dev": {"mlm_loss": 9.0},
            "pretrain": {"seed": 1}}
    export(model, tokenizer, tmp_path / "LMCite", info, model_card(info))
    directory = tmp_path / "LMCite"
    assert json.loads((directory / INFO_FILE).read_text())["fingerprint"] == "f" * 16
    assert "CiteBERT" in (directory / "README.md").read_text()
    reloaded = AutoModelForMaskedLM.from_pretrained(directory)
    for name, value in model.mlm.state_dict().items():
        torch.testing.assert_close(reloaded.state_dict()[name], value)
    encoder = AutoModel.from_pretrained(directory)
    torch.testing.assert_close(encoder.embeddings.word_embeddings.weight,
                               model.mlm.bert.embeddings.word_embeddings.weight)
    from safetensors.torch import load_file

    assert set(load_file(directory / CITE_HEAD_FILE)) == set(model.cite_head.state_dict())
