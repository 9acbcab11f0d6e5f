"""The contextual model (the paper's Longformer-Ctx, on any encoder) and its Solo control.

A paragraph goes in whole: ``[CLS] s1 [SEP] s2 [SEP] ... sn [SEP]``. The encoder's hidden state at
each [SEP] (``pooling: sep``, the paper's) or the mean of the hidden states over a sentence's tokens
and its [SEP] (``pooling: mean``) passes through one hidden layer and a classifier: one logit pair
per sentence, in order. With a Longformer encoder the [SEP] tokens (and [CLS]) get global attention.

Paragraphs longer than the encoder's window are split into overlapping windows of whole
sentences (never silently truncated): each sentence is scored in the window where it has the most
context on both sides, and only there. A single sentence longer than the window gets a window of
its own, truncated to fit; such sentences are counted and logged. ``solo: true`` (the control) gives
every sentence its own window, so the same model sees no context.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from citeworth.models import data, encoders, loop
from citeworth.models.spec import ModelSpec
from citeworth.models.torch_model import TorchModel

log = logging.getLogger(__name__)
HEAD_FILE = "context_head.safetensors"


def plan_windows(lengths: list[int], budget: int, overlap: int) -> list[tuple[int, int]]:
    """Sentence ranges ``[start, end)`` covering all sentences, each fitting ``budget`` tokens.

    A sentence costs its tokens plus its [SEP]. A window after the first starts up to ``overlap``
    sentences before the previous window's end (context), but never so early that the first new
    sentence would not fit. A sentence that cannot fit even alone gets a window of its own.
    """
    cost = [n + 1 for n in lengths]
    windows: list[tuple[int, int]] = []
    start = 0
    while start < len(cost):
        end, used = start, 0
        while end < len(cost) and used + cost[end] <= budget:
            used += cost[end]
            end += 1
        end = max(end, start + 1)  # too long alone: its own (truncated) window
        windows.append((start, end))
        if end == len(cost):
            break
        nxt = end
        while nxt > max(start + 1, end - overlap) and sum(cost[nxt - 1 : end + 1]) <= budget:
            nxt -= 1
        start = nxt
    return windows


def window_owners(windows: list[tuple[int, int]], n: int) -> list[int]:
    """For each sentence, the window that scores it: most context on its scarcer side, then the earliest."""
    owners = []
    for i in range(n):
        candidates = [(min(i - a, b - 1 - i), -w) for w, (a, b) in enumerate(windows) if a <= i < b]
        owners.append(-max(candidates)[1])
    return owners


class ContextAdapter(loop.Adapter):
    """One item per window; its labels/index are those of the sentences the window owns."""

    def __init__(self, tokenizer, window: int, overlap: int, solo: bool, longformer: bool,
                 pooling: str = "sep"):
        self.tokenizer, self.window, self.overlap, self.pooling = tokenizer, window, overlap, pooling
        self.solo, self.longformer = solo, longformer
        self.last_stats: dict = {}

    def items(self, records: list[dict], weights: np.ndarray | None = None) -> list[loop.Item]:
        texts = data.sentences(records)
        if not texts:
            return []
        tokens = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        y = data.labels(records)
        w = np.ones(len(texts)) if weights is None else weights
        items, offset, split, truncated = [], 0, 0, 0
        for record in records:
            n = len(record["samples"])
            lengths = [len(t) for t in tokens[offset : offset + n]]
            windows = [(i, i + 1) for i in range(n)] if self.solo else plan_windows(
                lengths, self.window - 1, self.overlap)
            split += len(windows) > 1 and not self.solo
            owners = window_owners(windows, n)
            for w_idx, (a, b) in enumerate(windows):
                owned = [k for k in range(a, b) if owners[k] == w_idx]
                item, cut = self._item(tokens, offset, a, b, owned, y, w)
                items.append(item)
                truncated += cut
            offset += n
        self.last_stats = {"windows": len(items), "paragraphs_split": int(split),
                           "sentences_truncated": truncated}
        if truncated:
            log.warning("%d sentence(s) longer than the %d-token window were truncated in a window of "
                        "their own", truncated, self.window)
        return items

    def _item(self, tokens, offset, a, b, owned, y, w) -> tuple[loop.Item, int]:
        ids, starts, seps, cut = [self.tokenizer.cls_token_id], [], [], 0
        room = self.window - 2  # [CLS] and the sentence's own [SEP]
        for k in range(a, b):
            sentence = tokens[offset + k]
            if len(sentence) > room:
                sentence, cut = sentence[:room], cut + 1
            starts.append(len(ids))
            ids.extend(sentence)
            ids.append(self.tokenizer.sep_token_id)
            seps.append(len(ids) - 1)
        rows = [offset + k for k in owned]
        item = loop.Item(ids, [int(y[r]) for r in rows], [float(w[r]) for r in rows], rows,
                         {"starts": starts, "seps": seps, "owned": [k - a for k in owned]})
        return item, cut

    def collate(self, items: list[loop.Item]) -> loop.Batch:
        ids, mask = loop.pad([item.input_ids for item in items], self.tokenizer.pad_token_id)
        sep_batch, sep_pos, starts, select, row = [], [], [], [], 0
        for b, item in enumerate(items):
            sep_batch.extend([b] * len(item.extra["seps"]))
            sep_pos.extend(item.extra["seps"])
            starts.extend(item.extra["starts"])
            select.extend(row + k for k in item.extra["owned"])
            row += len(item.extra["seps"])
        inputs = {"input_ids": ids, "attention_mask": mask,
                  "sep_batch": torch.tensor(sep_batch, dtype=torch.long),
                  "sep_pos": torch.tensor(sep_pos, dtype=torch.long)}
        if self.pooling == "mean":
            inputs["span_start"] = torch.tensor(starts, dtype=torch.long)
        if self.longformer:
            global_mask = torch.zeros_like(ids)
            global_mask[:, 0] = 1
            global_mask[inputs["sep_batch"], inputs["sep_pos"]] = 1
            inputs["global_attention_mask"] = global_mask
        labels, weights, index = loop.flat_targets(items)
        return loop.Batch(inputs, labels, weights, index, torch.tensor(select, dtype=torch.long))


class ContextClassifier(nn.Module):
    """Encoder → a vector per sentence (its [SEP]'s state, or the mean over its span when the batch
    gives ``span_start``) → one hidden layer (tanh) → classifier."""

    def __init__(self, encoder: nn.Module, head_hidden: int | None, dropout: float):
        super().__init__()
        self.encoder = encoder
        size = encoder.config.hidden_size
        self.hidden = nn.Linear(size, head_hidden or size)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(head_hidden or size, 2)

    def get_input_embeddings(self) -> nn.Module:
        return self.encoder.get_input_embeddings()

    def forward(self, input_ids=None, attention_mask=None, sep_batch=None, sep_pos=None,
                global_attention_mask=None, inputs_embeds=None, span_start=None) -> torch.Tensor:
        extra = {} if global_attention_mask is None else {"global_attention_mask": global_attention_mask}
        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              inputs_embeds=inputs_embeds, **extra).last_hidden_state
        if span_start is None:
            vectors = states[sep_batch, sep_pos]  # (all [SEP]s, hidden), item then position order
        else:  # span sums from running sums: the tokens start..sep of each sentence, [SEP] included
            sums = torch.nn.functional.pad(states.cumsum(dim=1), (0, 0, 1, 0))
            span = sums[sep_batch, sep_pos + 1] - sums[sep_batch, span_start]
            vectors = span / (sep_pos + 1 - span_start).unsqueeze(-1).to(span.dtype)
        return self.classifier(self.dropout(torch.tanh(self.hidden(vectors))))


class ContextModel(TorchModel):
    """Saved as the encoder (``save_pretrained``, reloadable with AutoModel) + tokenizer + the head."""

    def save_files(self, directory: Path) -> None:
        self.tokenizer.save_pretrained(directory)
        self.module.encoder.save_pretrained(directory)
        head = {k: v.contiguous() for k, v in self.module.state_dict().items()
                if not k.startswith("encoder.")}
        save_file(head, directory / HEAD_FILE)


def _assemble(spec: ModelSpec, encoder, tokenizer) -> tuple[ContextClassifier, ContextAdapter]:
    params = spec.context
    window = encoders.max_window(encoder.config, tokenizer, cap=params.window)
    longformer = encoders.is_longformer(encoder.config)
    module = ContextClassifier(encoder, params.head_hidden, params.dropout)
    return module, ContextAdapter(tokenizer, window, params.overlap, params.solo, longformer, params.pooling)


def fit(spec: ModelSpec, train: list[dict], dev: list[dict], seed: int, work_dir: Path | None = None,
        live_dir: Path | None = None, finished_dir: Path | None = None) -> ContextModel:
    torch.manual_seed(seed)
    encoder, tokenizer = encoders.load_encoder_and_tokenizer(spec.encoder)
    module, adapter = _assemble(spec, encoder, tokenizer)
    items = adapter.items(train)
    train_stats = dict(adapter.last_stats)
    dev_items = adapter.items(dev)
    dev_set = loop.DevSet(dev_items, data.labels(dev)) if dev_items else None
    weights = data.balanced_class_weights(data.labels(train)) if spec.weighted_loss else np.ones(2)
    history = loop.fit(module, adapter, items, dev_set, spec.optim, seed, weights,
                       checkpoint_dir=work_dir, live_dir=live_dir, desc=spec.name or spec.kind,
                       finished_dir=finished_dir)
    model = ContextModel(spec, module, adapter, tokenizer)
    model.history = history
    model.stats = {"window": adapter.window, **{f"train_{k}": v for k, v in train_stats.items()}}
    return model


def load(directory: Path, spec: ModelSpec) -> ContextModel:
    from transformers import AutoModel, AutoTokenizer

    encoder = AutoModel.from_pretrained(directory)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    module, adapter = _assemble(spec, encoder, tokenizer)
    missing, unexpected = module.load_state_dict(load_file(directory / HEAD_FILE), strict=False)
    if unexpected or any(not k.startswith("encoder.") for k in missing):
        raise ValueError(f"{directory / HEAD_FILE} does not fit the context head: missing "
                         f"{[k for k in missing if not k.startswith('encoder.')]}, unexpected {unexpected}")
    return ContextModel(spec, module, adapter, tokenizer)
