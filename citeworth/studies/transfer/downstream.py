"""Fine-tuning an encoder on a downstream task (Table 6) and scoring it.

Every variant of Table 6 is fine-tuned with the same head, freshly initialised: a pooled [CLS]
classifier (Linear + tanh + dropout + Linear) for sentence tasks, a linear tagger on the first
sub-word of each word for NER; both train with the shared loop of ``citeworth.models.loop``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from citeworth.models import encoders, loop
from citeworth.studies.transfer.params import FineTuneParams
from citeworth.studies.transfer.tasks import CLASSIFICATION, NER, LabelledText, TaggedSentence, TaskData


class ClsHead(nn.Module):
    """Pooled [CLS] classifier: Linear + tanh (the BERT pooler's shape), dropout, Linear."""

    def __init__(self, hidden_size: int, n_labels: int, dropout: float):
        super().__init__()
        self.pooler = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden_size, n_labels)

    def forward(self, cls_state: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(torch.tanh(self.pooler(cls_state))))


class SentenceClassifier(nn.Module):
    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float):
        super().__init__()
        self.encoder = encoder
        self.head = ClsHead(encoder.config.hidden_size, n_labels, dropout)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(hidden[:, 0])


class TokenTagger(nn.Module):
    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(encoder.config.hidden_size, n_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.classifier(self.dropout(hidden))


class TextAdapter(loop.Adapter):
    """One item per text, its label the class id; row ``i`` is the ``i``-th example."""

    def __init__(self, tokenizer, max_length: int, label_ids: dict[str, int]):
        self.tokenizer, self.max_length, self.label_ids = tokenizer, max_length, label_ids

    def items(self, examples: list[LabelledText], weights=None) -> list[loop.Item]:
        ids = self.tokenizer([ex.text for ex in examples], truncation=True,
                             max_length=self.max_length)["input_ids"]
        return [loop.Item(ids[i], [self.label_ids[ex.label]], [1.0], [i]) for i, ex in enumerate(examples)]

    def collate(self, items: list[loop.Item]) -> loop.Batch:
        ids, mask = loop.pad([item.input_ids for item in items], self.tokenizer.pad_token_id)
        labels, weights, index = loop.flat_targets(items)
        return loop.Batch({"input_ids": ids, "attention_mask": mask}, labels, weights, index)


class TagAdapter(loop.Adapter):
    """One item per sentence; the scored rows are each word's first sub-word, indexed by the word's
    position in the split's flattened word order. Words cut off by ``max_length`` get no row."""

    def __init__(self, tokenizer, max_length: int, tag_ids: dict[str, int]):
        if not tokenizer.is_fast:
            raise ValueError("NER fine-tuning needs a fast tokenizer (word_ids aligns tags to sub-words)")
        self.tokenizer, self.max_length, self.tag_ids = tokenizer, max_length, tag_ids

    def items(self, sentences: list[TaggedSentence], weights=None) -> list[loop.Item]:
        encoded = self.tokenizer([list(s.tokens) for s in sentences], is_split_into_words=True,
                                 truncation=True, max_length=self.max_length)
        items, offset = [], 0
        for i, sentence in enumerate(sentences):
            first = first_subwords(encoded.word_ids(i))
            words = sorted(first)
            items.append(loop.Item(encoded["input_ids"][i], [self.tag_ids[sentence.tags[w]] for w in words],
                                   [1.0] * len(words), [offset + w for w in words],
                                   {"positions": [first[w] for w in words]}))
            offset += len(sentence.tokens)
        return items

    def collate(self, items: list[loop.Item]) -> loop.Batch:
        ids, mask = loop.pad([item.input_ids for item in items], self.tokenizer.pad_token_id)
        select = torch.zeros_like(ids, dtype=torch.bool)
        for row, item in enumerate(items):
            select[row, item.extra["positions"]] = True
        labels, weights, index = loop.flat_targets(items)
        return loop.Batch({"input_ids": ids, "attention_mask": mask}, labels, weights, index, select)


def first_subwords(word_ids: list[int | None]) -> dict[int, int]:
    """word index -> position of its first sub-word."""
    first: dict[int, int] = {}
    for position, word in enumerate(word_ids):
        if word is not None and word not in first:
            first[word] = position
    return first


def predict_classes(module: nn.Module, adapter: loop.Adapter, items: list[loop.Item], n_rows: int,
                    batch_size: int, device: torch.device) -> np.ndarray:
    """The arg-max class of every scored row, -1 for rows no item scores (truncated words)."""
    predicted = np.full(n_rows, -1, dtype=np.int64)
    module.eval()
    with torch.inference_mode():
        for idx in loop.length_batches(items, batch_size, None):
            batch = adapter.collate([items[i] for i in idx]).to(device)
            predicted[batch.index.numpy()] = loop.logits_of(module, batch).argmax(-1).cpu().numpy()
    return predicted


def score(metric: str, gold: list, predicted: list) -> float:
    """Macro-/micro-F1 over class labels, or span-level F1 over tag sequences (seqeval, conlleval
    chunking: reads both IOB1 and IOB2)."""
    if metric == "span_f1":
        from seqeval.metrics import f1_score as span_f1

        return float(span_f1(gold, predicted, zero_division=0))
    from sklearn.metrics import f1_score

    return float(f1_score(gold, predicted, average=metric.removesuffix("_f1"), zero_division=0))


def fine_tune(encoder_name: str, data: TaskData, params: FineTuneParams, seed: int) -> dict:
    """Fine-tune encoder ``encoder_name`` (a name or directory, see ``models.encoders``) on ``data``
    with a fresh head and the shared training loop; score the final weights on dev and test."""
    torch.manual_seed(seed)  # the head's initialisation
    encoder, tokenizer = encoders.load_encoder_and_tokenizer(encoder_name)
    ids = {label: i for i, label in enumerate(data.labels)}
    if data.spec.kind == CLASSIFICATION:
        adapter, module = TextAdapter(tokenizer, params.max_length, ids), SentenceClassifier
    else:
        adapter, module = TagAdapter(tokenizer, params.max_length, ids), TokenTagger
    model = module(encoder, len(ids), params.dropout)
    history = loop.fit(model, adapter, adapter.items(data.splits["train"]), None, params.optim, seed,
                       np.ones(len(ids)), desc=f"{data.spec.name} seed {seed}")
    device = loop.resolve_device(params.optim.device)
    scores = {split: evaluate(model, adapter, data, split, params.optim.eval_batch_size, device)
              for split in ("dev", "test")}
    return {**scores, "steps": history[-1]["step"] if history else 0,
            "train_loss": history[-1]["train_loss"] if history else None,
            "test_items": len(data.splits["test"])}


def evaluate(module: nn.Module, adapter: loop.Adapter, data: TaskData, split: str, batch_size: int,
             device: torch.device) -> float:
    """The task's metric on ``split``; a word the tagger never saw (truncated) counts as ``O``."""
    examples = data.splits[split]
    tagging = data.spec.kind == NER
    n_rows = sum(len(ex.tokens) for ex in examples) if tagging else len(examples)
    flat = [data.labels[i] if i >= 0 else "O"
            for i in predict_classes(module, adapter, adapter.items(examples), n_rows, batch_size, device)]
    if not tagging:
        return score(data.spec.metric, [ex.label for ex in examples], flat)
    predicted, offset = [], 0
    for ex in examples:
        predicted.append(flat[offset:offset + len(ex.tokens)])
        offset += len(ex.tokens)
    return score(data.spec.metric, [list(ex.tags) for ex in examples], predicted)
