"""The transfer stage (§6, Table 6): is cite-worthiness a useful pre-training signal?

From a base encoder (the embedded default; SciBERT in paper mode) three variants are trained on
the curated CiteWorth sentences, as the paper's code does:

- **LM**: masked-LM fine-tuning;
- **Cite**: cite-worthiness classification, a pooled [CLS] head on the unmasked sentence;
- **LMCite** (CiteBERT): both on every batch, the two losses summed (the cite head reads the
  same masked batch unless ``unmask_citation``).

Each is exported with ``save_pretrained`` (the masked-LM model and its tokenizer, plus the cite
head's weights and a model card) under ``models/transfer/<variant>/``. Then Base and the three
variants are fine-tuned on the downstream tasks (``citeworth.downstream``) over several seeds;
``metrics/transfer.json`` and ``reports/table6.md`` hold mean ± std per task and variant.

Every pre-trained variant and every (task, variant, seed) run is fingerprinted by its inputs and
params, so a rerun redoes only what changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from citeworth.domains import set_threads
from citeworth.downstream import (
    ClsHead,
    FineTuneParams,
    TaskData,
    TaskSpec,
    fine_tune,
    load_task,
    resolve_task,
)
from citeworth.errors import StageFailed
from citeworth.evaluation import mean_std, prf
from citeworth.io import dumps, read_jsonl, write_json, write_text
from citeworth.models import data, encoders, loop
from citeworth.models.base import atomic_dir
from citeworth.models.spec import OptimParams
from citeworth.params import to_dict

log = logging.getLogger(__name__)

BASE = "Base"
INFO_FILE = "citeworth_transfer.json"
CITE_HEAD_FILE = "cite_head.safetensors"


@dataclass(frozen=True)
class Objective:
    mlm: bool
    cite: bool


OBJECTIVES = {"LM": Objective(mlm=True, cite=False), "Cite": Objective(mlm=False, cite=True),
              "LMCite": Objective(mlm=True, cite=True)}


@dataclass
class PretrainParams:
    """Defaults are the paper's CiteBERT run (its public scripts); the demo caps data and steps."""

    max_length: int = 128  # sub-word tokens per sentence, specials included
    max_sentences: int | None = None  # training sentences drawn with a fixed seed (null: all)
    max_dev_sentences: int | None = None  # dev sentences scored after training (null: all)
    mlm_probability: float = 0.15
    mlm_weight: float = 1.0
    cite_weight: float = 1.0
    unmask_citation: bool = False  # LMCite: the cite head reads the unmasked sentence (a 2nd pass)
    weighted_loss: bool = False  # class-balanced cite loss (the paper's CiteBERT run used none)
    dropout: float = 0.1
    seed: int = 1000
    optim: OptimParams = field(default_factory=lambda: OptimParams(
        batch_size=32, epochs=10, lr=1.351e-6, warmup_steps=300, weight_decay=0.01))


@dataclass
class DownstreamParams:
    # The SciBERT benchmark's data/ folder as the download stage lays it out (or a mirror's copy).
    data_root: Path = Path("raw/demo/demo-v1/github/allenai/scibert/data")
    tasks: list[TaskSpec] = field(default_factory=lambda: [TaskSpec("sci-cite"), TaskSpec("citation_intent")])
    seeds: list[int] = field(default_factory=lambda: [1, 2, 3, 4, 5])
    finetune: FineTuneParams = field(default_factory=FineTuneParams)


@dataclass
class TransferParams:
    encoder: str = "embedded"  # the Base model: "embedded", a hub name (SciBERT) or a local path
    data_dir: Path = Path("data/citeworth")  # the CiteWorth dataset: train.jsonl / dev.jsonl
    variants: list[str] = field(default_factory=lambda: ["LM", "Cite", "LMCite"])
    pretrain: PretrainParams = field(default_factory=PretrainParams)
    downstream: DownstreamParams = field(default_factory=DownstreamParams)
    models_dir: Path = Path("models/transfer")
    runs_dir: Path = Path("metrics/transfer")  # one JSON per (task, variant, seed) run
    metrics_path: Path = Path("metrics/transfer.json")
    table_path: Path = Path("reports/table6.md")
    threads: int | None = None  # torch CPU threads (null: torch's default)


def transfer(params: TransferParams) -> dict:
    set_threads(params.threads)
    unknown = sorted(set(params.variants) - set(OBJECTIVES))
    if unknown:
        raise StageFailed(f"unknown transfer variant(s) {unknown}; variants: {', '.join(OBJECTIVES)}")
    tasks = [resolve_task(t) for t in params.downstream.tasks]
    for task in tasks:
        missing = [str(p) for p in task_files(params.downstream.data_root, task) if not p.exists()]
        if missing:
            raise StageFailed(f"task {task.name}: missing {', '.join(missing)} (run the download stage, or "
                              "point transfer.downstream.data_root at the SciBERT benchmark's data folder)")
    pretrained = {name: pretrain_variant(name, params) for name in params.variants}
    encoders_by_variant = {BASE: (params.encoder, _digest({"encoder": params.encoder}))}
    encoders_by_variant.update({name: (str(Path(params.models_dir) / name), info["fingerprint"])
                                for name, info in pretrained.items()})
    loaded: dict[str, TaskData] = {}  # each task's files are read once, and only if a run needs them
    results = {task.name: {variant: [run_downstream(task, variant, encoder, fingerprint, seed, params, loaded)
                                     for seed in params.downstream.seeds]
                           for variant, (encoder, fingerprint) in encoders_by_variant.items()}
               for task in tasks}
    metrics = aggregate(tasks, results, pretrained, params)
    write_json(Path(params.metrics_path), metrics)
    write_text(Path(params.table_path), table6(metrics))
    return {"average": metrics["average"], "tasks": {t: m["test"] for t, m in metrics["tasks"].items()}}


# ---------------------------------------------------------------------------------------------
# The pre-training model and its losses


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


# ---------------------------------------------------------------------------------------------
# Pre-training a variant


def pretrain_variant(variant: str, params: TransferParams) -> dict:
    """Train and export ``variant`` unless an export with the same fingerprint exists; its info."""
    directory = Path(params.models_dir) / variant
    split_paths = [Path(params.data_dir) / f"{s}.jsonl" for s in ("train", "dev")]
    for path in split_paths:
        if not path.exists():
            raise StageFailed(f"{path} is missing: run the assemble stage first")
    fingerprint = _digest({"variant": variant, "encoder": params.encoder,
                           "pretrain": to_dict(params.pretrain), "data": data.dataset_version(split_paths)})
    info_path = directory / INFO_FILE
    if info_path.exists() and json.loads(info_path.read_text()).get("fingerprint") == fingerprint:
        log.info("transfer: %s is up to date (%s)", variant, directory)
        return json.loads(info_path.read_text())
    train = sentence_items(split_paths[0], params.pretrain, params.pretrain.max_sentences)
    dev = sentence_items(split_paths[1], params.pretrain, params.pretrain.max_dev_sentences)
    model, tokenizer, history = train_variant(variant, params, train)
    metrics = dev_metrics(model, tokenizer, dev, OBJECTIVES[variant], params.pretrain)
    info = {"variant": variant, "fingerprint": fingerprint, "base_encoder": params.encoder,
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
        metrics["cite"] = _rounded(prf(gold, predicted))
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
        f"- fingerprint (params + data version): `{info['fingerprint']}`",
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


# ---------------------------------------------------------------------------------------------
# Downstream runs and Table 6


def run_downstream(task: TaskSpec, variant: str, encoder: str, encoder_fingerprint: str, seed: int,
                   params: TransferParams, loaded: dict[str, TaskData]) -> dict:
    """Fine-tune ``encoder`` on ``task`` with ``seed``, or reuse the run's result if up to date."""
    ds = params.downstream
    fingerprint = _digest({"task": asdict(task), "encoder": encoder_fingerprint, "seed": seed,
                           "finetune": to_dict(ds.finetune),
                           "data": data.dataset_version(task_files(ds.data_root, task))})
    path = Path(params.runs_dir) / task.name / f"{variant}-seed{seed}.json"
    if path.exists() and json.loads(path.read_text()).get("fingerprint") == fingerprint:
        return json.loads(path.read_text())
    log.info("transfer: fine-tuning %s on %s, seed %d", variant, task.name, seed)
    if task.name not in loaded:
        loaded[task.name] = load_task(ds.data_root, task)
    scores = fine_tune(encoder, loaded[task.name], ds.finetune, seed)
    result = {"task": task.name, "variant": variant, "seed": seed, "metric": task.metric,
              "fingerprint": fingerprint, **_rounded(scores)}
    write_json(path, result)
    return result


def task_files(data_root: Path, task: TaskSpec) -> list[Path]:
    return [Path(data_root) / task.path / f"{split}.txt" for split in ("train", "dev", "test")]


def aggregate(tasks: list[TaskSpec], results: dict, pretrained: dict, params: TransferParams) -> dict:
    variants = [BASE, *params.variants]
    per_task = {}
    for task in tasks:
        runs = results[task.name]
        per_task[task.name] = {
            "display": task.display, "metric": task.metric,
            "test": {v: _rounded(mean_std([r["test"] for r in runs[v]])) for v in variants},
            "dev": {v: _rounded(mean_std([r["dev"] for r in runs[v]])) for v in variants},
        }
    average = {v: round(float(np.mean([per_task[t.name]["test"][v]["mean"] for t in tasks])), 6)
               for v in variants} if tasks else {}
    return {"encoder": params.encoder, "variants": variants, "seeds": list(params.downstream.seeds),
            "tasks": per_task, "average": average,
            "pretraining": {name: {k: info[k] for k in ("train_sentences", "steps", "train_loss", "dev")}
                            for name, info in pretrained.items()}}


def table6(metrics: dict) -> str:
    variants = metrics["variants"]
    lines = [
        "# Table 6: transfer to downstream tasks",
        "",
        f"Base encoder `{metrics['encoder']}`; test scores ×100, mean ± std over seeds "
        f"{metrics['seeds']}; the best mean of each row in bold.",
        "",
        "| Dataset | Metric | " + " | ".join(variants) + " |",
        "|---|---|" + "---:|" * len(variants),
    ]
    for task in metrics["tasks"].values():
        cells = {v: task["test"][v] for v in variants}
        best = max(c["mean"] for c in cells.values())
        row = [_cell(c["mean"], c["std"], c["mean"] == best) for c in cells.values()]
        lines.append(f"| {task['display']} | {task['metric']} | " + " | ".join(row) + " |")
    if metrics["average"]:
        best = max(metrics["average"].values())
        row = [_cell(metrics["average"][v], None, metrics["average"][v] == best) for v in variants]
        lines.append("| Average | | " + " | ".join(row) + " |")
    lines += ["", "Pre-training (dev split):", ""]
    for name, info in metrics["pretraining"].items():
        dev = info["dev"]
        parts = [f"{info['steps']} steps on {info['train_sentences']} sentences"]
        if "mlm_loss" in dev:
            parts.append(f"dev MLM loss {dev['mlm_loss']:.3f}")
        if "cite" in dev:
            parts.append(f"dev cite-worthiness F1 {100 * dev['cite']['f1']:.2f}")
        lines.append(f"- {name}: " + ", ".join(parts))
    return "\n".join(lines) + "\n"


def _cell(mean: float, std: float | None, bold: bool) -> str:
    text = f"{100 * mean:.2f}" + ("" if std is None else f" ± {100 * std:.2f}")
    return f"**{text}**" if bold else text


def _rounded(stats: dict) -> dict:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in stats.items()}


def _mean(values: list[float]) -> float | None:
    return round(float(np.mean(values)), 6) if values else None


def _digest(obj: dict) -> str:
    return hashlib.sha256(dumps(obj).encode()).hexdigest()[:16]
