"""The siamese pair classifier: InferSent's features on a shared encoder, trained by the one loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from citeworth.corpora.silver import siamese
from citeworth.models.spec import OptimParams

PAIRS = [
    {"citing_text": citing, "cited_text": cited, "label": label} for citing, cited, label in [
        ("frozen tissue keeps rna intact.", "rna survives freezing for years.", 1),
        ("frozen tissue keeps rna intact.", "the bank has forty donors.", 0),
        ("smoking causes lung cancer.", "smokers died of lung cancer more often.", 1),
        ("smoking causes lung cancer.", "forms were sent by post.", 0)]
]


def params(trainable: bool) -> siamese.SiameseParams:
    optim = OptimParams(batch_size=2, epochs=1, max_steps=2, lr=0.01, warmup_steps=0, eval_batch_size=4)
    return siamese.SiameseParams(trainable=trainable, hidden=16, max_length=16, optim=optim)


@pytest.fixture(scope="module")
def frozen():
    torch.set_num_threads(1)
    return siamese.fit(params(False), PAIRS, PAIRS[:2])


def test_the_features_are_u_v_their_difference_and_product(frozen):
    module = frozen.module.eval()
    batch = frozen.adapter.collate(frozen.adapter.items(PAIRS))
    with torch.no_grad():
        u = module.embed(batch.inputs["citing_ids"], batch.inputs["citing_mask"])
        v = module.embed(batch.inputs["cited_ids"], batch.inputs["cited_mask"])
        expected = module.head(torch.cat([u, v, (u - v).abs(), u * v], dim=-1))
        assert torch.allclose(module(**batch.inputs), expected)
    assert module.head[0].in_features == 4 * module.encoder.config.hidden_size


def test_a_frozen_encoder_learns_nothing_and_the_head_does(frozen):
    fresh = siamese.fit(params(False), PAIRS, [])  # the same seed and data, trained again
    assert all(not p.requires_grad for p in frozen.module.encoder.parameters())
    frozen.module.train()
    assert frozen.module.head.training and not frozen.module.encoder.training  # no dropout when frozen
    untrained, _ = siamese._module(params(False), "embedded")
    before = untrained.encoder.state_dict()
    assert all(torch.equal(before[k], v) for k, v in frozen.module.encoder.state_dict().items())
    heads = zip(fresh.module.head.parameters(), frozen.module.head.parameters(), strict=True)
    assert all(torch.equal(a, b) for a, b in heads)  # the same seed, the same model
    assert len(frozen.history) >= 1


def test_a_saved_model_scores_the_same_after_loading(frozen, tmp_path):
    frozen.save(tmp_path / "model")
    loaded = siamese.load(tmp_path / "model")
    assert np.allclose(loaded.predict_proba(PAIRS), frozen.predict_proba(PAIRS))
    assert not (tmp_path / "model" / "model.safetensors").exists()  # the encoder is the unchanged one


def test_a_fine_tuned_encoder_is_saved_with_the_head(tmp_path):
    torch.set_num_threads(1)
    tuned = siamese.fit(params(True), PAIRS, [])
    assert any(p.requires_grad for p in tuned.module.encoder.parameters())
    tuned.save(tmp_path / "model")
    loaded = siamese.load(tmp_path / "model")
    assert np.allclose(loaded.predict_proba(PAIRS), tuned.predict_proba(PAIRS), atol=1e-6)


def test_a_frozen_encoder_embeds_each_distinct_sentence_once(frozen, monkeypatch):
    module = frozen.module.eval()
    module._frozen_vectors.clear()
    batch = frozen.adapter.collate(frozen.adapter.items(PAIRS))
    ids, mask = batch.inputs["citing_ids"], batch.inputs["citing_mask"]  # two sentences, twice each
    encoded = []
    encode = module._encode
    monkeypatch.setattr(module, "_encode", lambda i, m: encoded.append(len(i)) or encode(i, m))
    first = module.embed(ids, mask)
    again = module.embed(ids.flip(0), mask.flip(0))
    assert encoded == [2]  # once per distinct sentence, never again
    assert torch.equal(again, first.flip(0))
    with torch.no_grad():
        assert torch.allclose(first, encode(ids, mask), atol=1e-5)  # as the whole padded batch gives
