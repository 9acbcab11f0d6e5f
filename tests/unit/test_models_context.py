"""The context model: window planning, separator gathering (one logit pair per sentence, in order),
windows on a paragraph longer than the encoder's window, Longformer global attention."""

from __future__ import annotations

import pytest
import torch
from transformers import BertConfig, BertModel, LongformerConfig, LongformerModel

from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.models import encoders, loop
from citeworth.models.context import ContextAdapter, ContextClassifier
from citeworth.models.inputs import plan_windows, window_owners

pytestmark = pytest.mark.usefixtures("torch_one_thread")  # toy models, busy machine


@pytest.fixture(scope="module")
def tokenizer():
    return encoders.load_tokenizer(encoders.EMBEDDED)


def tiny_bert(vocab_size: int) -> BertModel:
    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=128)
    return BertModel(config).eval()


def record(texts: list[str], labels: list[int]) -> dict:
    names = {1: CITE_WORTHY, 0: NOT_CITE_WORTHY}
    return {"mag_field_of_study": ["Biology"],
            "samples": [{"text": t, "label": names[y]} for t, y in zip(texts, labels, strict=True)]}


SENTENCES = [f"Sentence number {word} talks about topic {word} at some length here." for word in
             ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]]


@pytest.mark.parametrize("lengths,budget,overlap", [
    ([5, 5, 5, 5, 5, 5, 5], 13, 1), ([3, 9, 2, 2, 8, 1, 1, 4], 12, 2), ([4] * 20, 30, 3), ([2, 50, 2], 10, 2),
])
def test_windows_cover_every_sentence_within_budget(lengths, budget, overlap):
    windows = plan_windows(lengths, budget, overlap)
    assert windows[0][0] == 0 and windows[-1][1] == len(lengths)
    for (a, b), (c, d) in zip(windows, windows[1:], strict=False):
        assert a < c <= b < d  # progress, no gap; overlap at most `overlap` sentences
        assert b - c <= overlap
    for a, b in windows:
        assert b - a == 1 or sum(n + 1 for n in lengths[a:b]) <= budget
    owners = window_owners(windows, len(lengths))
    assert all(windows[w][0] <= i < windows[w][1] for i, w in enumerate(owners))


def test_window_owner_is_the_one_with_most_context():
    windows = [(0, 4), (2, 6)]
    # Sentence 3 has 3 before / 0 after in window 0 but 1 / 2 in window 1.
    assert window_owners(windows, 6) == [0, 0, 0, 1, 1, 1]


def test_paragraph_longer_than_window_is_split_and_every_sentence_scored_once(tokenizer):
    rec = record(SENTENCES, [i % 2 for i in range(len(SENTENCES))])
    adapter = ContextAdapter(tokenizer, window=48, overlap=1, solo=False, longformer=False)
    items = adapter.items([rec])
    assert len(items) > 1 and adapter.last_stats["paragraphs_split"] == 1
    assert all(len(item.input_ids) <= 48 for item in items)
    assert sorted(i for item in items for i in item.index) == list(range(len(SENTENCES)))
    for item in items:
        seps = item.extra["seps"]
        assert [item.input_ids[p] for p in seps] == [tokenizer.sep_token_id] * len(seps)
        assert item.labels == [i % 2 for i in item.index]
    assert adapter.last_stats["sentences_truncated"] == 0


def test_sentence_longer_than_window_gets_its_own_truncated_window(tokenizer, caplog):
    long = " ".join(["word"] * 200) + "."
    rec = record([SENTENCES[0], long, SENTENCES[1]], [0, 1, 0])
    adapter = ContextAdapter(tokenizer, window=40, overlap=1, solo=False, longformer=False)
    items = adapter.items([rec])
    alone = [item for item in items if item.index == [1]]
    assert len(alone) == 1 and len(alone[0].input_ids) == 40 and alone[0].extra["seps"] == [39]
    assert adapter.last_stats["sentences_truncated"] == 1
    assert "truncated" in caplog.text


def test_separator_gathering_gives_one_logit_pair_per_sentence_in_order(tokenizer):
    recs = [record(SENTENCES[:3], [0, 1, 0]), record(SENTENCES[3:8], [1, 1, 0, 0, 1])]
    adapter = ContextAdapter(tokenizer, window=512, overlap=1, solo=False, longformer=False)
    items = adapter.items(recs)
    module = ContextClassifier(tiny_bert(len(tokenizer)), head_hidden=8, dropout=0.0).eval()
    batch = adapter.collate(items)
    with torch.no_grad():
        logits = loop.logits_of(module, batch)
        assert logits.shape == (8, 2)
        assert batch.index.tolist() == list(range(8))
        # Row k is the head applied to the encoder's state at the k-th [SEP] of its paragraph.
        for b, item in enumerate(items):
            ids = torch.tensor([item.input_ids])
            states = module.encoder(input_ids=ids).last_hidden_state[0]
            expected = module.classifier(torch.tanh(module.hidden(states[item.extra["seps"]])))
            rows = [r for r, i in enumerate(batch.index.tolist()) if i in item.index]
            assert torch.allclose(logits[rows], expected, atol=1e-5), f"paragraph {b}"


def test_windowed_scores_follow_the_sentence_order(tokenizer):
    recs = [record(SENTENCES, [0] * 10), record(SENTENCES[:2], [1, 0])]
    module = ContextClassifier(tiny_bert(len(tokenizer)), head_hidden=None, dropout=0.0)
    windowed = ContextAdapter(tokenizer, window=48, overlap=1, solo=False, longformer=False)
    scores = loop.predict_proba(module, windowed, windowed.items(recs), 12, 3, torch.device("cpu"))
    alone = loop.predict_proba(module, windowed, windowed.items(recs[1:]), 2, 3, torch.device("cpu"))
    assert scores.shape == (12,)
    assert scores[10:] == pytest.approx(alone, abs=1e-6)


def test_solo_puts_every_sentence_in_its_own_window(tokenizer):
    adapter = ContextAdapter(tokenizer, window=512, overlap=1, solo=True, longformer=False)
    items = adapter.items([record(SENTENCES[:4], [0, 1, 0, 1])])
    assert [item.index for item in items] == [[0], [1], [2], [3]]
    assert all(len(item.extra["seps"]) == 1 for item in items)


def test_longformer_gets_global_attention_on_cls_and_separators(tokenizer):
    adapter = ContextAdapter(tokenizer, window=512, overlap=1, solo=False, longformer=True)
    items = adapter.items([record(SENTENCES[:3], [0, 1, 0]), record(SENTENCES[3:4], [1])])
    batch = adapter.collate(items)
    global_mask = batch.inputs["global_attention_mask"]
    for b, item in enumerate(items):
        assert global_mask[b].nonzero().flatten().tolist() == [0, *item.extra["seps"]]
    config = LongformerConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                              num_attention_heads=2, intermediate_size=32, attention_window=[8],
                              max_position_embeddings=130, pad_token_id=tokenizer.pad_token_id)
    assert encoders.is_longformer(config)
    torch.manual_seed(0)
    module = ContextClassifier(LongformerModel(config), head_hidden=None, dropout=0.0).eval()
    with torch.no_grad():
        assert loop.logits_of(module, batch).shape == (4, 2)


def test_mean_pooling_averages_each_sentence_span_with_its_separator(tokenizer):
    adapter = ContextAdapter(tokenizer, window=512, overlap=1, solo=False, longformer=False, pooling="mean")
    items = adapter.items([record(SENTENCES[:3], [0, 1, 0]), record(SENTENCES[3:4], [1])])
    batch = adapter.collate(items)
    module = ContextClassifier(tiny_bert(len(tokenizer)), head_hidden=None, dropout=0.0).eval()
    with torch.no_grad():
        logits = loop.logits_of(module, batch)
        states = module.encoder(input_ids=batch.inputs["input_ids"],
                                attention_mask=batch.inputs["attention_mask"]).last_hidden_state
    spans = [(b, start, sep) for b, item in enumerate(items)
             for start, sep in zip(item.extra["starts"], item.extra["seps"], strict=True)]
    lengths = [len(tokenizer(s, add_special_tokens=False)["input_ids"]) for s in SENTENCES[:4]]
    assert [sep - start for _, start, sep in spans] == lengths
    means = torch.stack([states[b, start : sep + 1].mean(dim=0) for b, start, sep in spans])
    expected = module.classifier(torch.tanh(module.hidden(means)))
    assert torch.allclose(logits, expected, atol=1e-5)
    assert not torch.allclose(logits, ContextClassifier.forward(
        module, **{k: v for k, v in batch.inputs.items() if k != "span_start"}), atol=1e-3)


def test_an_unknown_pooling_is_a_params_error():
    from citeworth.models.spec import ContextParams

    with pytest.raises(ValueError, match="pooling"):
        ContextParams(pooling="max")
