"""The siamese pair classifier of Roy & Mercer's §5 (InferSent's head on a shared sentence encoder).

Both sentences of a pair go through the same encoder (mean-pooled, ``encoders.mean_pool``); the
features ``[u, v, |u - v|, u * v]`` go through an MLP to a two-way softmax: is the cited sentence
the one the citing sentence relies on? The encoder is fine-tuned (``trainable: true``) or frozen
(only the MLP learns; the default, cheap on a CPU). Training is the project's one loop
(``loop.fit``: AdamW, early stopping on dev F1, resumable checkpoints).

A pair is a dict with ``citing_text``, ``cited_text`` and (for training and scoring) ``label``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from pydantic import Field
from safetensors.torch import load_file, save_file
from torch import nn

from citeworth.core.params import Params, build, to_dict
from citeworth.models import data, encoders, loop
from citeworth.models.base import atomic_dir
from citeworth.models.spec import OptimParams

HEAD_FILE = "siamese_head.safetensors"
PARAMS_FILE = "siamese.json"


def _demo_optim() -> OptimParams:
    return OptimParams(batch_size=32, epochs=5, lr=0.001, warmup_steps=0, weight_decay=0.0, patience=2,
                       eval_batch_size=64)


class SiameseParams(Params):
    encoder: str = "embedded"
    """"embedded" (MiniLM), a hub name or a local path"""
    trainable: bool = False
    """fine-tune the encoder too (paper: its encoders are trained)"""
    hidden: int = 512
    """the MLP's hidden layer (paper: 512)"""
    dropout: float = 0.1
    """Dropout before the MLP's output layer."""
    max_length: int = 64
    """tokens per sentence"""
    seed: int = 1
    """Weights and batch order."""
    optim: OptimParams = Field(default_factory=_demo_optim)
    """The training loop."""


class PairAdapter(loop.Adapter):
    """One item per pair: the citing sentence's tokens, the cited sentence's in ``extra``."""

    def __init__(self, tokenizer, max_length: int):
        self.tokenizer, self.max_length = tokenizer, max_length

    def items(self, pairs: list[dict], weights: np.ndarray | None = None) -> list[loop.Item]:
        if not pairs:
            return []
        citing, cited = ([p[key] for p in pairs] for key in ("citing_text", "cited_text"))
        a, b = (self.tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]
                for texts in (citing, cited))
        w = np.ones(len(pairs)) if weights is None else weights
        return [loop.Item(a[i], [int(pairs[i].get("label", 0))], [float(w[i])], [i], {"cited": b[i]})
                for i in range(len(pairs))]

    def collate(self, items: list[loop.Item]) -> loop.Batch:
        pad = self.tokenizer.pad_token_id
        citing_ids, citing_mask = loop.pad([item.input_ids for item in items], pad)
        cited_ids, cited_mask = loop.pad([item.extra["cited"] for item in items], pad)
        labels, weights, index = loop.flat_targets(items)
        return loop.Batch({"citing_ids": citing_ids, "citing_mask": citing_mask, "cited_ids": cited_ids,
                           "cited_mask": cited_mask}, labels, weights, index)


class SiameseClassifier(nn.Module):
    """Shared encoder -> u, v -> [u, v, |u - v|, u * v] -> hidden layer (ReLU) -> two logits."""

    def __init__(self, encoder: nn.Module, hidden: int, dropout: float, trainable: bool):
        super().__init__()
        self.encoder, self.trainable = encoder, trainable
        self._frozen_vectors: dict[tuple[int, ...], torch.Tensor] = {}  # a frozen encoder's, by ids
        self.encoder.requires_grad_(trainable)
        size = encoder.config.hidden_size
        self.head = nn.Sequential(nn.Linear(4 * size, hidden), nn.ReLU(), nn.Dropout(dropout),
                                  nn.Linear(hidden, 2))

    def train(self, mode: bool = True) -> SiameseClassifier:
        super().train(mode)
        if not self.trainable:
            self.encoder.eval()  # a frozen encoder keeps its dropout off
        return self

    def embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if not self.trainable:
            return self._frozen_embed(ids, mask)
        return self._encode(ids, mask)

    def _encode(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        states = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        return encoders.mean_pool(states, mask)

    @torch.no_grad()
    def _frozen_embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """A frozen encoder's vector of each (right-padded) row, computed once per distinct sentence:
        a citing sentence recurs in every pair of its cited paper's sentences, so most rows of a
        batch, and of the dev pairs scored after it, are sentences already seen."""
        lengths = mask.sum(1).tolist()
        keys = [tuple(row[:n]) for row, n in zip(ids.tolist(), lengths, strict=True)]
        new = list({key: i for i, key in enumerate(keys) if key not in self._frozen_vectors}.values())
        if new:
            width = max(lengths[i] for i in new)  # the new rows' own padding, not the batch's
            rows = torch.tensor(new, device=ids.device)
            vectors = self._encode(ids[rows, :width], mask[rows, :width])
            self._frozen_vectors.update((keys[i], vector) for i, vector in zip(new, vectors, strict=True))
        return torch.stack([self._frozen_vectors[key] for key in keys])

    def forward(self, citing_ids, citing_mask, cited_ids, cited_mask) -> torch.Tensor:
        u, v = self.embed(citing_ids, citing_mask), self.embed(cited_ids, cited_mask)
        return self.head(torch.cat([u, v, (u - v).abs(), u * v], dim=-1))


@dataclass
class SiameseModel:
    params: SiameseParams
    module: SiameseClassifier
    tokenizer: object
    history: list[dict] = field(default_factory=list)

    @property
    def adapter(self) -> PairAdapter:
        return PairAdapter(self.tokenizer, self.params.max_length)

    def predict_proba(self, pairs: list[dict]) -> np.ndarray:
        """P(linked) of each pair, in order."""
        if not pairs:
            return np.zeros(0)
        device = loop.resolve_device(self.params.optim.device)
        self.module.to(device)
        return loop.predict_proba(self.module, self.adapter, self.adapter.items(pairs), len(pairs),
                                  self.params.optim.eval_batch_size, device, desc="score pairs")

    def save(self, directory: Path) -> None:
        """The head, the params, the tokenizer, and the encoder when it was fine-tuned (atomically)."""
        with atomic_dir(Path(directory)) as tmp:
            self.tokenizer.save_pretrained(tmp)
            if self.params.trainable:
                self.module.encoder.save_pretrained(tmp)
            head = {k: v.detach().cpu().contiguous() for k, v in self.module.head.state_dict().items()}
            save_file(head, tmp / HEAD_FILE)
            (tmp / PARAMS_FILE).write_text(json.dumps(to_dict(self.params), sort_keys=True, indent=2) + "\n")


def labels_of(pairs: list[dict]) -> np.ndarray:
    return np.array([pair["label"] for pair in pairs], dtype=np.int64)


def _module(params: SiameseParams, encoder_name: str) -> tuple[SiameseClassifier, object]:
    encoder, tokenizer = encoders.load_encoder_and_tokenizer(encoder_name)
    return SiameseClassifier(encoder, params.hidden, params.dropout, params.trainable), tokenizer


def fit(params: SiameseParams, train: list[dict], dev: list[dict], checkpoint_dir: Path | None = None,
        desc: str = "siamese") -> SiameseModel:
    """Train on ``train`` pairs; early stopping on ``dev`` pairs' F1 (none: the last weights)."""
    torch.manual_seed(params.seed)
    module, tokenizer = _module(params, params.encoder)
    adapter = PairAdapter(tokenizer, params.max_length)
    dev_items = adapter.items(dev)
    dev_set = loop.DevSet(dev_items, labels_of(dev)) if dev_items else None
    labels = labels_of(train)
    history = loop.fit(module, adapter, adapter.items(train), dev_set, params.optim, params.seed,
                       data.balanced_class_weights(labels), checkpoint_dir=checkpoint_dir, desc=desc)
    return SiameseModel(params, module, tokenizer, history)


def load(directory: Path) -> SiameseModel:
    """A model saved by ``SiameseModel.save``."""

    directory = Path(directory)
    params = build(SiameseParams, json.loads((directory / PARAMS_FILE).read_text()), where=str(directory))
    module, tokenizer = _module(params, str(directory) if params.trainable else params.encoder)
    module.head.load_state_dict(load_file(directory / HEAD_FILE))
    return SiameseModel(params, module, tokenizer)
