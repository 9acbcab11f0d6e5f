"""Pre-training the transfer variants (§6) from a base encoder on the curated CiteWorth sentences.

As the paper's code does it:

- **LM**: masked-LM fine-tuning;
- **Cite**: cite-worthiness classification, a pooled [CLS] head on the unmasked sentence;
- **LMCite** (CiteBERT): both on every batch, the two losses summed (the cite head reads the
  same masked batch unless ``unmask_citation``).

Each is exported with ``save_pretrained`` (the masked-LM model and its tokenizer, plus the cite
head's weights and a model card) under ``models/transfer/<variant>/``, with a fingerprint of its
inputs and params, so a rerun retrains only what changed.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from citeworth.core.errors import StageFailed
from citeworth.core.fingerprint import current_record, data_version, fingerprint
from citeworth.core.io import read_jsonl, write_json, write_text
from citeworth.core.params import to_dict
from citeworth.models import data, encoders, loop
from citeworth.models.base import atomic_dir
from citeworth.models.evaluation import prf, rounded
from citeworth.studies.transfer.downstream import ClsHead
from citeworth.studies.transfer.params import PretrainParams, TransferParams

log = logging.getLogger(__name__)

INFO_FILE = "citeworth_transfer.json"
CITE_HEAD_FILE = "cite_head.safetensors"
# The code a pre-trained variant and a downstream run come from, this module's import closure (the
# models, the downstream heads and tasks): not Table 6's formatting.
CODE = (__name__,)


@dataclass(frozen=True)
class Objective:
    mlm: bool
    cite: bool


OBJECTIVES = {"LM": Objective(mlm=True, cite=False), "Cite": Objective(mlm=False, cite=True),
              "LMCite": Objective(mlm=True, cite=True)}


class CiteBert(nn.Module):
    """A masked-LM model plus a pooled [CLS] cite-worthiness head on its encoder."""

    def __init__(self, mlm_model: nn.Module, dropout: float):
        super().__init__()
        self.mlm = mlm_model
        self.cite_head = ClsHead(mlm_model.config.hidden_size, 2, dropout)

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.mlm.base_model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    def mlm_loss(self, hidden: torch.Tensor, mlm_labels: torch.Tensor) -> torch.Tensor:
        """Cross-entropy of the masked positions only: the vocabulary projection of the other ~85%
        of tokens would be wasted work (the loss is identical to the model's own MLM loss)."""
        masked = mlm_labels != -100
        logits = lm_head(self.mlm)(hidden[masked])
        if logits.shape[0] == 0:
            return hidden.sum() * 0.0  # a batch where nothing got masked contributes nothing
        return nn.functional.cross_entropy(logits, mlm_labels[masked])

    def cite_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.cite_head(hidden[:, 0])


def lm_head(mlm_model: nn.Module) -> nn.Module:
    """The MLM head of a ``*ForMaskedLM`` model: its one child besides the encoder (``cls`` for
    BERT, ``lm_head`` for RoBERTa / Longformer)."""
    heads = [m for name, m in mlm_model.named_children() if name != mlm_model.base_model_prefix]
    if len(heads) != 1:
        raise ValueError(f"cannot find the MLM head of {type(mlm_model).__name__}: children "
                         f"{[n for n, _ in mlm_model.named_children()]}")
    return heads[0]


@dataclass
class PretrainBatch:
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    masked_ids: torch.Tensor  # input_ids after BERT masking (80% [MASK], 10% random, 10% kept)
    mlm_labels: torch.Tensor  # original ids at masked positions, -100 elsewhere
    cite_labels: torch.Tensor

    def to(self, device: torch.device) -> PretrainBatch:
        return PretrainBatch(*(t.to(device) for t in asdict(self).values()))


def objective_losses(model: CiteBert, batch: PretrainBatch, objective: Objective, params: PretrainParams,
                     class_weights: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """The variant's loss terms and their weighted sum ``total`` (LMCite: both terms, every batch)."""
    losses: dict[str, torch.Tensor] = {}
    hidden = None
    if objective.mlm:
        hidden = model.encode(batch.masked_ids, batch.attention_mask)
        losses["mlm"] = model.mlm_loss(hidden, batch.mlm_labels)
    if objective.cite:
        if hidden is None or params.unmask_citation:
            hidden = model.encode(batch.input_ids, batch.attention_mask)
        losses["cite"] = nn.functional.cross_entropy(model.cite_logits(hidden), batch.cite_labels,
                                                     weight=class_weights)
    losses["total"] = (params.mlm_weight * losses["mlm"] if "mlm" in losses else 0.0) + \
        (params.cite_weight * losses["cite"] if "cite" in losses else 0.0)
    return losses


class Masker:
    """BERT masking (transformers' collator) with its own seeded generator, so the masks do not
    depend on the global RNG (nor on the process name, which the collator's own ``seed`` needs)."""

    def __init__(self, tokenizer, probability: float, seed: int):
        from transformers import DataCollatorForLanguageModeling

        self.collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=probability)
        self.collator.generator = torch.Generator().manual_seed(seed)
        self.special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)))

    def __call__(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        special = torch.isin(input_ids, self.special_ids)
        return self.collator.torch_mask_tokens(input_ids.clone(), special_tokens_mask=special)


def collate(items: list[loop.Item], pad_id: int, masker: Masker) -> PretrainBatch:
    ids, mask = loop.pad([item.input_ids for item in items], pad_id)
    masked, mlm_labels = masker(ids)
    labels = torch.tensor([item.labels[0] for item in items], dtype=torch.long)
    return PretrainBatch(ids, mask, masked, mlm_labels, labels)


def pretrain_variant(variant: str, params: TransferParams) -> dict:
    """Train and export ``variant`` unless an export with the same fingerprint exists; its info."""
    directory = Path(params.models_dir) / variant
    split_paths = [Path(params.data_dir) / f"{s}.jsonl" for s in ("train", "dev")]
    for path in split_paths:
        if not path.exists():
            raise StageFailed(f"{path} is missing: run the assemble stage first")
    expected = fingerprint(CODE, variant=variant, encoder=params.encoder, pretrain=to_dict(params.pretrain),
                           data=data_version(split_paths), threads=params.threads)  # may change float sums
    if (info := current_record(directory / INFO_FILE, expected)) is not None:
        log.info("transfer: %s is up to date (%s)", variant, directory)
        return info
    train = sentence_items(split_paths[0], params.pretrain, params.pretrain.max_sentences)
    dev = sentence_items(split_paths[1], params.pretrain, params.pretrain.max_dev_sentences)
    model, tokenizer, history = train_variant(variant, params, train)
    metrics = dev_metrics(model, tokenizer, dev, OBJECTIVES[variant], params.pretrain)
    info = {"variant": variant, "fingerprint": expected, "base_encoder": params.encoder,
            "train_sentences": len(train), "dev_sentences": len(dev), "steps": history["steps"],
            "train_loss": history["loss"], "dev": metrics, "pretrain": to_dict(params.pretrain)}
    export(model, tokenizer, directory, info, model_card(info))
    return info


def sentence_items(path: Path, params: PretrainParams, limit: int | None) -> list[tuple[str, int]]:
    """(sentence, cite-worthy) pairs of a split, at most ``limit`` drawn with a fixed seed."""
    texts = data.sentences(read_jsonl(path))
    labels = data.labels(read_jsonl(path))
    pairs = list(zip(texts, labels.tolist(), strict=True))
    if limit is not None and len(pairs) > limit:
        keep = np.sort(np.random.default_rng(params.seed).choice(len(pairs), size=limit, replace=False))
        pairs = [pairs[i] for i in keep]
    if not pairs:
        raise StageFailed(f"{path} holds no sentences")
    return pairs


def _tokenized(tokenizer, pairs: list[tuple[str, int]], max_length: int) -> list[loop.Item]:
    ids = tokenizer([text for text, _ in pairs], truncation=True, max_length=max_length)["input_ids"]
    return [loop.Item(ids[i], [label], [1.0], [i]) for i, (_, label) in enumerate(pairs)]


def train_variant(variant: str, params: TransferParams, train: list[tuple[str, int]]):
    """The pre-training loop. It is not ``loop.fit``: that loop scores one logits tensor with one
    cross-entropy, and LMCite's objective is the sum of two losses over different heads."""
    from transformers import AutoModelForMaskedLM

    p, objective = params.pretrain, OBJECTIVES[variant]
    torch.manual_seed(p.seed)
    tokenizer = encoders.load_tokenizer(params.encoder)
    mlm_model = encoders.from_pretrained(AutoModelForMaskedLM, params.encoder, "masked-LM model")
    model = CiteBert(mlm_model, p.dropout)
    device = loop.resolve_device(p.optim.device)
    model.to(device)
    items = _tokenized(tokenizer, train, p.max_length)
    labels = np.array([label for _, label in train])
    weights = torch.tensor(data.balanced_class_weights(labels), dtype=torch.float32, device=device) \
        if p.weighted_loss else None
    masker = Masker(tokenizer, p.mlm_probability, p.seed)
    total = min(math.ceil(len(items) / p.optim.batch_size) * p.optim.epochs, p.optim.max_steps or math.inf)
    optimizer, scheduler = loop.optimizer_and_schedule(model, p.optim, total)
    step, losses = 0, []
    model.train()
    with tqdm(total=total, desc=f"pretrain {variant}", unit="step") as bar:
        for epoch in range(p.optim.epochs):
            for idx in loop.length_batches(items, p.optim.batch_size, np.random.default_rng([p.seed, epoch])):
                if step >= total:
                    break
                batch = collate([items[i] for i in idx], tokenizer.pad_token_id, masker).to(device)
                loss = objective_losses(model, batch, objective, p, weights)["total"]
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), p.optim.max_grad_norm)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                losses.append(float(loss.detach()))
                step += 1
                bar.update(1)
                bar.set_postfix(loss=f"{losses[-1]:.4f}", refresh=False)
    window = max(1, min(20, len(losses) // 4))
    history = {"steps": step, "loss": {"first": _mean(losses[:window]), "last": _mean(losses[-window:])}}
    return model, tokenizer, history


def dev_metrics(model: CiteBert, tokenizer, dev: list[tuple[str, int]], objective: Objective,
                params: PretrainParams) -> dict:
    """Dev MLM loss (fixed masks) and cite-worthiness P/R/F1 of the trained heads."""
    device = next(model.parameters()).device
    items = _tokenized(tokenizer, dev, params.max_length)
    masker = Masker(tokenizer, params.mlm_probability, seed=0)  # the same masks for every variant
    mlm_total, mlm_batches, predicted = 0.0, 0, np.zeros(len(items), dtype=np.int64)
    model.eval()
    with torch.inference_mode():
        for idx in loop.length_batches(items, params.optim.eval_batch_size, None):
            batch = collate([items[i] for i in idx], tokenizer.pad_token_id, masker).to(device)
            if objective.mlm:
                mlm_total += float(model.mlm_loss(model.encode(batch.masked_ids, batch.attention_mask),
                                                  batch.mlm_labels))
                mlm_batches += 1
            if objective.cite:
                logits = model.cite_logits(model.encode(batch.input_ids, batch.attention_mask))
                predicted[idx] = logits.argmax(-1).cpu().numpy()
    metrics: dict = {}
    if objective.mlm:
        metrics["mlm_loss"] = round(mlm_total / max(mlm_batches, 1), 6)
    if objective.cite:
        gold = np.array([label for _, label in dev])
        metrics["cite"] = rounded(prf(gold, predicted))
    return metrics


def export(model: CiteBert, tokenizer, directory: Path, info: dict, card: str) -> None:
    """``save_pretrained`` of the masked-LM model (loadable by any ``AutoModel*``), its tokenizer,
    the cite head's weights, the model card and the fingerprinted info, atomically."""
    from safetensors.torch import save_file

    with atomic_dir(directory) as tmp:
        model.mlm.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        head = {k: v.detach().cpu().contiguous() for k, v in model.cite_head.state_dict().items()}
        save_file(head, tmp / CITE_HEAD_FILE)
        write_text(tmp / "README.md", card)
        write_json(tmp / INFO_FILE, info)


def model_card(info: dict) -> str:
    variant = info["variant"]
    what = {"LM": "masked-LM fine-tuning on CiteWorth sentences",
            "Cite": "cite-worthiness fine-tuning (pooled [CLS] head) on CiteWorth sentences",
            "LMCite": "masked-LM and cite-worthiness fine-tuning on CiteWorth sentences, the two losses "
                      "summed on every batch (CiteBERT)"}[variant]
    return "\n".join([
        "---",
        "library_name: transformers",
        "pipeline_tag: fill-mask",
        f"base_model: {info['base_encoder']}",
        "tags: [citeworth, cite-worthiness, scientific-text]",
        "---",
        "",
        f"# citeworth transfer variant: {variant}",
        "",
        f"{info['base_encoder']} after {what} (Wright & Augenstein 2021, §6).",
        "",
        "Load the encoder with `AutoModel.from_pretrained(<this folder>)` (or `AutoModelForMaskedLM`).",
        f"The cite-worthiness head (Linear + tanh, dropout, Linear on [CLS]) is in `{CITE_HEAD_FILE}`.",
        "",
        "## Training",
        "",
        f"- sentences: {info['train_sentences']} (train split), optimiser steps: {info['steps']}",
        f"- training loss: {info['train_loss']['first']:.4f} (first steps) -> "
        f"{info['train_loss']['last']:.4f} (last steps)",
        f"- fingerprint (code, params and data version): `{info['fingerprint']}`",
        "",
        "## Dev metrics",
        "",
        "```json",
        json.dumps(info["dev"], indent=2, sort_keys=True),
        "```",
        "",
        "## Params",
        "",
        "```json",
        json.dumps(info["pretrain"], indent=2, sort_keys=True),
        "```",
        "",
    ])


def _mean(values: list[float]) -> float | None:
    return round(float(np.mean(values)), 6) if values else None
