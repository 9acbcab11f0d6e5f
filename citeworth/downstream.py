"""Downstream scientific NLP tasks (the SciBERT benchmark of Table 6): readers and fine-tuning.

The benchmark files keep the layout of ``allenai/scibert``'s ``data/`` folder (downloaded to
``raw/<source>/<release>/github/allenai/scibert/data`` or read from a mirror):

- ``text_classification/<task>/{train,dev,test}.txt``: JSON lines ``{"text", "label", "metadata"}``
  (SciCite, ACL-ARC citation intent, and the relation tasks ChemProt / SciERC, whose entity pair is
  marked inline with ``<< >>`` and ``[[ ]]``);
- ``ner/<task>/{train,dev,test}.txt``: CoNLL-style, one token per line with the tag in the last
  column, blank lines between sentences, ``-DOCSTART-`` lines between documents. Tags are IOB1 in
  BC5CDR and SciERC (``I-`` opens a span) and IOB2 in NCBI-disease; seqeval's default (conlleval)
  chunking reads both.

Every variant of Table 6 is fine-tuned with the same head, freshly initialised: a pooled [CLS]
classifier (Linear + tanh + dropout + Linear) for sentence tasks, a linear tagger on the first
sub-word of each word for NER.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from citeworth.models import encoders, loop
from citeworth.models.spec import OptimParams

log = logging.getLogger(__name__)

SPLITS = ("train", "dev", "test")
CLASSIFICATION, NER = "classification", "ner"
METRICS = ("macro_f1", "micro_f1", "span_f1")


@dataclass(frozen=True)
class TaskSpec:
    """One downstream task; ``kind``, ``path``, ``metric`` and ``display`` default from KNOWN_TASKS."""

    name: str
    kind: str | None = None
    path: str | None = None  # folder under the benchmark data root holding train/dev/test.txt
    metric: str | None = None
    display: str | None = None  # the row name in Table 6
    # Demo subsets: at most this many examples of each split, drawn with a fixed seed (null: all).
    max_train: int | None = None
    max_dev: int | None = None
    max_test: int | None = None


KNOWN_TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("sci-cite", CLASSIFICATION, "text_classification/sci-cite", "macro_f1", "SciCite (CLS)"),
        TaskSpec("citation_intent", CLASSIFICATION, "text_classification/citation_intent", "macro_f1",
                 "ACL-ARC (CLS)"),
        TaskSpec("chemprot", CLASSIFICATION, "text_classification/chemprot", "micro_f1", "ChemProt (REL)"),
        TaskSpec("sciie-relation-extraction", CLASSIFICATION, "text_classification/sciie-relation-extraction",
                 "macro_f1", "SciERC (REL)"),
        TaskSpec("bc5cdr", NER, "ner/bc5cdr", "span_f1", "BC5CDR (NER)"),
        TaskSpec("NCBI-disease", NER, "ner/NCBI-disease", "span_f1", "NCBI-Disease (NER)"),
        TaskSpec("sciie", NER, "ner/sciie", "span_f1", "SciERC (NER)"),
    )
}


def resolve_task(spec: TaskSpec) -> TaskSpec:
    """Fill the unset fields of ``spec`` from the known task of the same name; check the result."""
    known = KNOWN_TASKS.get(spec.name)
    if known is not None:
        spec = replace(spec, **{k: getattr(known, k) for k in ("kind", "path", "metric", "display")
                                if getattr(spec, k) is None})
    missing = [k for k in ("kind", "path", "metric") if getattr(spec, k) is None]
    if missing:
        raise ValueError(f"task {spec.name!r} is not a known task ({', '.join(KNOWN_TASKS)}); "
                         f"give its {', '.join(missing)}")
    if spec.kind not in (CLASSIFICATION, NER):
        raise ValueError(f"task {spec.name!r}: kind must be {CLASSIFICATION!r} or {NER!r}, got {spec.kind!r}")
    if spec.metric not in METRICS:
        raise ValueError(f"task {spec.name!r}: metric must be one of {METRICS}, got {spec.metric!r}")
    return replace(spec, display=spec.display or spec.name)


# ---------------------------------------------------------------------------------------------
# Readers


class LabelledText(NamedTuple):
    text: str
    label: str


class TaggedSentence(NamedTuple):
    tokens: tuple[str, ...]
    tags: tuple[str, ...]


def read_labelled_text(path: Path) -> Iterator[LabelledText]:
    """The JSON lines of a SciBERT text-classification file."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                yield LabelledText(str(record["text"]), str(record["label"]))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a {{text, label}} JSON line ({exc})") from exc


def read_conll(path: Path) -> Iterator[TaggedSentence]:
    """Sentences of a CoNLL-style NER file: token first, tag last, blank line between sentences."""
    tokens: list[str] = []
    tags: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            columns = line.split()
            if columns and columns[0] == "-DOCSTART-":
                continue
            if not columns:
                if tokens:
                    yield TaggedSentence(tuple(tokens), tuple(tags))
                    tokens, tags = [], []
                continue
            if len(columns) < 2:
                raise ValueError(f"{path}:{number}: expected 'token ... tag', got {line.rstrip()!r}")
            tokens.append(columns[0])
            tags.append(columns[-1])
    if tokens:
        yield TaggedSentence(tuple(tokens), tuple(tags))


@dataclass
class TaskData:
    spec: TaskSpec
    splits: dict[str, list]  # split -> LabelledText or TaggedSentence examples
    labels: list[str]  # class labels (classification) or tags (NER), sorted


def load_task(data_root: Path, spec: TaskSpec) -> TaskData:
    """Read a task's standard train/dev/test files, subsetting each split as the spec says."""
    spec = resolve_task(spec)
    folder = Path(data_root) / spec.path
    reader = read_labelled_text if spec.kind == CLASSIFICATION else read_conll
    limits = {"train": spec.max_train, "dev": spec.max_dev, "test": spec.max_test}
    splits = {}
    for split in SPLITS:
        path = folder / f"{split}.txt"
        if not path.exists():
            raise FileNotFoundError(f"task {spec.name}: {path} is missing (run the download stage, or set "
                                    "transfer.downstream.data_root to the benchmark's data folder)")
        examples = list(reader(path))
        if not examples:
            raise ValueError(f"task {spec.name}: {path} holds no examples")
        splits[split] = subsample(examples, limits[split], f"{spec.name}:{split}")
    # Labels of every split, so gold labels never seen in training still count in the scores.
    if spec.kind == CLASSIFICATION:
        labels = {ex.label for examples in splits.values() for ex in examples}
    else:
        labels = {tag for examples in splits.values() for ex in examples for tag in ex.tags}
    return TaskData(spec, splits, sorted(labels))


def subsample(examples: list, limit: int | None, key: str) -> list:
    """At most ``limit`` examples drawn with a fixed seed, kept in file order."""
    if limit is None or len(examples) <= limit:
        return examples
    keep = sorted(random.Random(key).sample(range(len(examples)), limit))
    return [examples[i] for i in keep]


# ---------------------------------------------------------------------------------------------
# Models and their adapters for the shared training loop (citeworth.models.loop)


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


# ---------------------------------------------------------------------------------------------
# Fine-tuning and scoring


@dataclass
class FineTuneParams:
    max_length: int = 128  # sub-word tokens per input, specials included; longer inputs are truncated
    dropout: float = 0.1
    # No early stopping: every run trains its epochs; dev and test are scored at the end.
    optim: OptimParams = field(default_factory=lambda: OptimParams(batch_size=32, epochs=3, lr=2e-5,
                                                                    warmup_steps=0, weight_decay=0.01))


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
            "train_loss": history[-1]["train_loss"] if history else None}


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
