"""Sentence-level models: one sentence in, one cite-worthiness score out.

Three kinds share this path and the training loop:
- ``sentence``: a classifier on any pretrained encoder (AutoModelForSequenceClassification), with
  class-weighted or plain cross-entropy, optionally PU learning (``pu: true``);
- ``transformer``: the same architecture trained from scratch (a BERT config of the paper's
  hyperparameters) with a subword (BPE) vocabulary learnt on the training split;
- ``crnn``: the Färber et al. (2018) baseline on that subword vocabulary, optional oversampling.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.models import data, encoders, loop, pu
from citeworth.models.crnn import CRNN
from citeworth.models.inputs import sentence_arrays, sentence_items
from citeworth.models.spec import ModelSpec
from citeworth.models.torch_model import WEIGHTS_FILE, TorchModel, load_state

log = logging.getLogger(__name__)
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ID2LABEL = {0: NOT_CITE_WORTHY, 1: CITE_WORTHY}


class SentenceAdapter(loop.Adapter):
    """One item per sentence: ``[CLS] sentence [SEP]``, cut to ``max_length`` tokens (counted, logged)."""

    def __init__(self, tokenizer, max_length: int):
        self.tokenizer, self.max_length = tokenizer, max_length
        self.last_stats: dict = {}

    def items(self, records: list[dict], weights: np.ndarray | None = None) -> list[loop.Item]:
        texts = data.sentences(records)
        if not texts:
            return []
        w = np.ones(len(texts)) if weights is None else weights
        ids = self.tokenizer(texts, verbose=False)["input_ids"]
        items, truncated = sentence_items(ids, data.labels(records), w, self.max_length)
        self.last_stats = {"sentences_truncated": truncated}
        if truncated:
            log.info("%d of %d sentences longer than %d tokens were truncated", truncated, len(texts),
                     self.max_length)
        return items

    def collate(self, items: list[loop.Item]) -> loop.Batch:
        arrays = sentence_arrays(items, self.tokenizer.pad_token_id)
        labels, weights, index = loop.flat_targets(items)
        return loop.Batch({name: torch.from_numpy(a) for name, a in arrays.items()}, labels, weights, index)


def train_subword_tokenizer(texts: list[str], vocab_size: int, max_length: int):
    """A BPE tokenizer (BERT normalisation and pre-tokenisation, [CLS] … [SEP]) learnt with
    ``tokenizers`` on ``texts`` (the training split).

    BPE rather than WordPiece: ``tokenizers``' WordPiece trainer (and BPE with a ``##`` prefix)
    gives a different vocabulary on every run; plain BPE is reproducible, so reruns are byte-identical.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, model_max_length=max_length,
                                   pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")


def _scratch_config(spec: ModelSpec, tokenizer):
    from transformers import BertConfig

    p = spec.scratch
    return BertConfig(vocab_size=len(tokenizer), hidden_size=p.d_model, num_hidden_layers=p.layers,
                      num_attention_heads=p.heads, intermediate_size=p.ff_dim, hidden_dropout_prob=p.dropout,
                      attention_probs_dropout_prob=p.dropout, max_position_embeddings=spec.max_length,
                      pad_token_id=tokenizer.pad_token_id, num_labels=2, id2label=ID2LABEL,
                      label2id={v: k for k, v in ID2LABEL.items()})


def build(spec: ModelSpec, train: list[dict]):
    """A fresh (module, tokenizer) for ``spec``; the vocabulary comes from ``train``."""
    if spec.kind == "sentence":
        from transformers import AutoModelForSequenceClassification

        module = encoders.from_pretrained(AutoModelForSequenceClassification, spec.encoder, "classifier",
                                          num_labels=2, id2label=ID2LABEL,
                                          label2id={v: k for k, v in ID2LABEL.items()})
        return module, encoders.load_tokenizer(spec.encoder)
    if spec.kind == "transformer":
        from transformers import BertForSequenceClassification

        tokenizer = train_subword_tokenizer(data.sentences(train), spec.scratch.vocab_size, spec.max_length)
        return BertForSequenceClassification(_scratch_config(spec, tokenizer)), tokenizer
    tokenizer = train_subword_tokenizer(data.sentences(train), spec.crnn.vocab_size, spec.max_length)
    return CRNN(len(tokenizer), tokenizer.pad_token_id, spec.crnn), tokenizer


def oversample(items: list[loop.Item], rng: np.random.Generator) -> list[loop.Item]:
    """Duplicate random cite-worthy items until both classes have as many items (Färber et al.)."""
    positives = [item for item in items if item.labels == [1]]
    deficit = len(items) - 2 * len(positives)
    if deficit <= 0 or not positives:
        return items
    extra = rng.choice(len(positives), size=deficit, replace=True)
    return items + [positives[i] for i in extra]


def fit(spec: ModelSpec, train: list[dict], dev: list[dict], seed: int, work_dir: Path | None = None,
        live_dir: Path | None = None, finished_dir: Path | None = None) -> TorchModel:
    if spec.pu:
        return _fit_pu(spec, train, dev, seed, work_dir, live_dir, finished_dir)
    torch.manual_seed(seed)
    module, tokenizer = build(spec, train)
    adapter = SentenceAdapter(tokenizer, spec.max_length)
    items = adapter.items(train)
    train_stats = {f"train_{k}": v for k, v in adapter.last_stats.items()}
    if spec.kind == "crnn" and spec.crnn.oversample:
        items = oversample(items, np.random.default_rng(seed))
    weights = data.balanced_class_weights(data.labels(train)) if spec.weighted_loss else np.ones(2)
    model = _train(spec, module, adapter, tokenizer, items, weights, dev, seed, work_dir, live_dir,
                   finished_dir)
    model.stats = train_stats
    return model


def _train(spec, module, adapter, tokenizer, items, class_weights, dev, seed, work_dir,
           live_dir, finished_dir) -> TorchModel:
    dev_items = adapter.items(dev)
    dev_set = loop.DevSet(dev_items, data.labels(dev)) if dev_items else None
    history = loop.fit(module, adapter, items, dev_set, spec.optim, seed, class_weights,
                       checkpoint_dir=work_dir, live_dir=live_dir, desc=spec.name or spec.kind,
                       finished_dir=finished_dir)
    model = TorchModel(spec, module, adapter, tokenizer)
    model.history = history
    return model


def _fit_pu(spec, train, dev, seed, work_dir, live_dir, finished_dir) -> TorchModel:
    """g: an unweighted classifier of labelled vs unlabelled (its scores must be calibrated), then the
    PU model on positives + duplicated, weighted unlabelled sentences. g is the fit of the same spec
    without PU and weights (the demo's sentence_noweight): a ``finished_dir`` shares it."""
    g_spec = spec.model_copy(update={"pu": False, "weighted_loss": False, "name": f"{spec.name or 'pu'}/g"})
    g = fit(g_spec, train, dev, seed, _sub(work_dir, "g"), _sub(live_dir, "g"), finished_dir)
    dev_labels = data.labels(dev)
    c = pu.estimate_c(g.predict_proba(dev)[dev_labels == 1])
    train_w = pu.unlabelled_positive_weights(g.predict_proba(train), c)
    mean_w = float(train_w[data.labels(train) == 0].mean())
    log.info("PU: c = %.4f on %d dev positives; mean w of unlabelled train sentences %.4f", c,
             int(dev_labels.sum()), mean_w)
    torch.manual_seed(seed)
    module, tokenizer = build(spec, train)
    adapter = SentenceAdapter(tokenizer, spec.max_length)
    items = pu.pu_items(adapter.items(train), dict(enumerate(train_w.tolist())))
    model = _train(spec, module, adapter, tokenizer, items, np.ones(2), dev, seed,
                   _sub(work_dir, "pu"), _sub(live_dir, "pu"), finished_dir)
    model.stats = {**g.stats, "pu_c": round(c, 6), "pu_g_history": g.history,
                   "pu_mean_unlabelled_weight": round(mean_w, 6)}
    return model


def _sub(directory: Path | None, part: str) -> Path | None:
    return None if directory is None else Path(directory) / part


def load(directory: Path, spec: ModelSpec) -> TorchModel:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    if spec.kind == "crnn":
        module = load_state(CRNN(len(tokenizer), tokenizer.pad_token_id, spec.crnn), directory / WEIGHTS_FILE)
    else:
        module = AutoModelForSequenceClassification.from_pretrained(directory)
    return TorchModel(spec, module, SentenceAdapter(tokenizer, spec.max_length), tokenizer)
