"""The contextual model (the paper's Longformer-Ctx, on any encoder) and its Solo control.

A paragraph goes in whole: ``[CLS] s1 [SEP] s2 [SEP] ... sn [SEP]``. The encoder's hidden state at
each [SEP] (``pooling: sep``, the paper's) or the mean of the hidden states over a sentence's tokens
and its [SEP] (``pooling: mean``) passes through one hidden layer and a classifier: one logit pair
per sentence, in order. With a Longformer encoder the [SEP] tokens (and [CLS]) get global attention.

Paragraphs longer than the encoder's window are split into overlapping windows of whole
sentences (never silently truncated): each sentence is scored in the window where it has the most
context on both sides, and only there (``citeworth.models.inputs``, which an exported model shares).
A single sentence longer than the window gets a window of its own, truncated to fit; such sentences
are counted and logged. ``solo: true`` (the control) gives every sentence its own window, so the
same model sees no context.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from citeworth.models import data, encoders, loop
from citeworth.models.inputs import Windows, context_arrays
from citeworth.models.spec import ModelSpec
from citeworth.models.torch_model import TorchModel

log = logging.getLogger(__name__)
HEAD_FILE = "context_head.safetensors"


class ContextAdapter(loop.Adapter):
    """One item per window (``inputs.Windows``); its labels/index are those of the sentences it owns."""

    def __init__(self, tokenizer, window: int, overlap: int, solo: bool, longformer: bool,
                 pooling: str = "sep"):
        self.tokenizer, self.window, self.overlap, self.pooling = tokenizer, window, overlap, pooling
        self.solo, self.longformer = solo, longformer
        self.windows = Windows(window, overlap, solo, tokenizer.cls_token_id, tokenizer.sep_token_id)
        self.last_stats: dict = {}

    def items(self, records: list[dict], weights: np.ndarray | None = None) -> list[loop.Item]:
        texts = data.sentences(records)
        if not texts:
            return []
        tokens = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        w = np.ones(len(texts)) if weights is None else weights
        sizes = [len(record["samples"]) for record in records]
        items, self.last_stats = self.windows.items(tokens, sizes, data.labels(records), w)
        if truncated := self.last_stats["sentences_truncated"]:
            log.warning("%d sentence(s) longer than the %d-token window were truncated in a window of "
                        "their own", truncated, self.window)
        return items

    def collate(self, items: list[loop.Item]) -> loop.Batch:
        arrays, select = context_arrays(items, self.tokenizer.pad_token_id, self.pooling, self.longformer)
        labels, weights, index = loop.flat_targets(items)
        inputs = {name: torch.from_numpy(array) for name, array in arrays.items()}
        return loop.Batch(inputs, labels, weights, index, torch.from_numpy(select))


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
