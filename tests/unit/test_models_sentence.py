"""Sentence-level pieces: the learnt subword tokenizer, oversampling, the spec's section checks."""

from __future__ import annotations

import numpy as np
import pytest

from citeworth.core.params import ParamsError, build
from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.models.loop import Item
from citeworth.models.sentence import oversample, train_subword_tokenizer
from citeworth.models.spec import AnyModelSpec

TEXTS = [f"Sentence {i} about photosynthesis, enzymes and {w} kinetics in plants." for i, w in
         enumerate(["protein", "reaction", "membrane", "transport", "binding", "signal"] * 5)]


def test_subword_tokenizer_is_reproducible_and_bert_shaped():
    first, second = (train_subword_tokenizer(TEXTS, 120, 32) for _ in range(2))
    assert first.get_vocab() == second.get_vocab()  # the same ids on every run: byte-identical models
    ids = first("Photosynthesis in plants.")["input_ids"]
    assert ids[0] == first.cls_token_id and ids[-1] == first.sep_token_id
    assert first.pad_token_id is not None and len(first) <= 120
    assert len(first(" ".join(TEXTS), truncation=True, max_length=32)["input_ids"]) == 32


def test_oversampling_balances_the_classes():
    items = [Item([1], [int(i < 3)], [1.0], [i]) for i in range(10)]
    out = oversample(items, np.random.default_rng(0))
    labels = [it.labels[0] for it in out]
    assert labels.count(1) == labels.count(0) == 7 and out[:10] == items


@pytest.mark.parametrize("mapping,message", [
    ({"kind": "tfidf_lr", "optim": {"epochs": 2}}, "does not read section"),
    ({"kind": "sentence", "pu": True}, "weighted_loss: false"),
    ({"kind": "context", "pu": True, "weighted_loss": False}, "pu applies to kind sentence"),
    ({"kind": "bert"}, "tag 'bert' .* does not match any of the expected tags"),
    ({"kind": "sentence", "optim": {"epoch": 2}}, "unknown key"),
])
def test_spec_rejects_settings_that_would_do_nothing(mapping, message):
    with pytest.raises(ParamsError, match=message):
        build(AnyModelSpec, mapping)


def test_spec_fills_the_sections_its_kind_reads():
    spec = build(AnyModelSpec, {"kind": "context", "context": {"window": 64}})
    assert spec.context.window == 64 and spec.optim.lr == pytest.approx(8.075e-6)
    assert spec.tfidf is None and spec.crnn is None


def test_long_sentences_are_cut_keeping_the_closing_token_and_counted():
    from citeworth.models.sentence import SentenceAdapter

    tokenizer = train_subword_tokenizer(TEXTS, 120, 512)
    adapter = SentenceAdapter(tokenizer, max_length=12)
    samples = [{"text": TEXTS[0], "label": CITE_WORTHY}, {"text": "Short one.", "label": NOT_CITE_WORTHY}]
    items = adapter.items([{"mag_field_of_study": ["Biology"], "samples": samples}])
    assert len(items[0].input_ids) == 12 and items[0].input_ids[-1] == tokenizer.sep_token_id
    assert items[1].input_ids == tokenizer("Short one.")["input_ids"]
    assert adapter.last_stats == {"sentences_truncated": 1} and [it.labels for it in items] == [[1], [0]]


@pytest.mark.parametrize("recurrent", ["lstm", "gru"])
def test_the_crnn_pools_each_row_as_a_packed_sequence_would(recurrent):
    """Its state after each row's last real step (what ONNX can export) is the final state of the
    packed sequence of that row."""
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence

    from citeworth.models.crnn import CRNN
    from citeworth.models.spec import CrnnParams

    torch.manual_seed(0)
    module = CRNN(50, 0, CrnnParams(embedding_dim=16, filters=8, hidden=8, recurrent=recurrent)).eval()
    ids, mask = torch.randint(1, 50, (5, 12)), torch.ones(5, 12, dtype=torch.long)
    for row, length in enumerate([12, 3, 7, 1, 9]):
        ids[row, length:], mask[row, length:] = 0, 0
    x = (module.embedding(ids) * mask.unsqueeze(-1).float()).transpose(1, 2)
    h = torch.cat([torch.relu(conv(x))[..., :12] for conv in module.convs], dim=1).transpose(1, 2)
    _, state = module.rnn(pack_padded_sequence(h, mask.sum(1), batch_first=True, enforce_sorted=False))
    packed = module.classifier((state[0] if recurrent == "lstm" else state)[-1])
    assert torch.allclose(module(ids, mask), packed, atol=1e-6)
