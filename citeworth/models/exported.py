"""An exported model, scored without torch: ONNX Runtime, ``tokenizers`` and numpy.

``citeworth model export`` (``citeworth.models.export``) writes one self-contained folder; this
module reads it back for ``citeworth check``, ``predict`` and ``lsp`` in an author's install:

- ``citeworth_export.json``: the format version, the model's kind and the settings its scorer needs
  (threshold, labels, inputs, special token ids, max length, context window and pooling), and the
  sha256 of every file the folder holds;
- ``model.onnx`` (or ``model.int8.onnx``): the network, ids in, one logit pair per scored row out;
  ``tokenizer.json`` its tokenizer; for TF-IDF + logistic regression, ``tfidf_lr.npz`` instead;
- ``README.md``: the model card; the weights and tokenizer in the Hugging Face layout beside them.

Items, windows and padding come from ``citeworth.models.inputs``, the code the torch models train
and score with, so a sentence is read the same way in both.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import re
from pathlib import Path

import numpy as np

from citeworth.core.io import sha256_file, user_cache_dir
from citeworth.models import data
from citeworth.models.inputs import Windows, context_arrays, length_batches, sentence_arrays, sentence_items

SETTINGS_FILE = "citeworth_export.json"
CARD_FILE = "README.md"
FORMAT = "citeworth-model"
FORMAT_VERSION = 1
TFIDF_FILE = "tfidf_lr.npz"
log = logging.getLogger(__name__)


class ExportError(ValueError):
    """An exported model that cannot be used; the message names the file and the fix."""


def is_exported(directory: Path) -> bool:
    return (Path(directory) / SETTINGS_FILE).is_file()


def read_settings(directory: Path) -> dict:
    """The folder's settings, checked for the format this citeworth reads."""
    path = Path(directory) / SETTINGS_FILE
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExportError(f"{directory} is not an exported citeworth model (no {SETTINGS_FILE}): export one "
                          "with `citeworth model export MODEL --out DIR`") from None
    except (OSError, ValueError) as exc:
        raise ExportError(f"{path}: cannot read ({exc}): export the model again") from None
    if not isinstance(settings, dict) or settings.get("format") != FORMAT:
        raise ExportError(f"{path} is not a citeworth model's settings: export the model again")
    version = settings.get("format_version")
    if version != FORMAT_VERSION:
        raise ExportError(
            f"{path}: model format {version}, but this citeworth reads format {FORMAT_VERSION}: "
            + ("install a newer citeworth (pip install -U citeworth)" if isinstance(version, int)
               and version > FORMAT_VERSION else "export the model again with this citeworth"))
    return settings


def verify(directory: Path, settings: dict, all_files: bool = False) -> None:
    """Every file the scorer reads (``all_files``: every file) is there with its recorded sha256."""
    files: dict[str, str] = settings.get("files", {})
    needed = files if all_files else {name: files.get(name) for name in scorer_files(settings)}
    for name, expected in needed.items():
        path = Path(directory) / name
        if expected is None:
            raise ExportError(f"{Path(directory) / SETTINGS_FILE} records no sha256 for {name}: "
                              "export the model again")
        if not path.is_file():
            raise ExportError(f"{path} is missing from the exported model: export it again "
                              "(or reinstall its package)")
        if sha256_file(path) != expected:
            raise ExportError(f"{path} was altered (its sha256 is not the one {SETTINGS_FILE} records): "
                              "export the model again (or reinstall its package)")


def scorer_files(settings: dict) -> list[str]:
    """The files the scorer reads, and the card: their sha256 is checked at every load; the rest (the
    Hugging Face weights, kept for fine-tuning or torch) by ``verify(all_files=True)``, as packaging does."""
    if settings["runtime"] == "tfidf":
        return [TFIDF_FILE, CARD_FILE]
    return [settings["graph"], settings["tokenizer"], CARD_FILE]


def load_exported(directory: Path, batch_size: int | None = None):
    """The scorer of the exported model in ``directory`` (``predict_proba`` as a trained model's)."""
    directory = Path(directory)
    settings = read_settings(directory)
    verify(directory, settings)
    if settings["runtime"] == "tfidf":
        return TfidfScorer(directory, settings)
    return OnnxScorer(directory, settings, batch_size)


class OnnxScorer:
    """A network exported to ONNX: sentence-level kinds (sentence, transformer, crnn) or the context
    model (windows of whole paragraphs, a score per sentence)."""

    def __init__(self, directory: Path, settings: dict, batch_size: int | None = None):
        from tokenizers import Tokenizer

        self.directory, self.settings = directory, settings
        self.name = settings["name"]
        self.batch_size = batch_size or settings["batch_size"]
        self.tokenizer = Tokenizer.from_file(str(directory / settings["tokenizer"]))
        self.tokenizer.no_truncation()  # as transformers calls it: no cut, no padding (ours below)
        self.tokenizer.no_padding()
        ids = settings["special_ids"]
        self.pad_id = ids["pad"]
        context = settings.get("context")
        self.windows = None if context is None else Windows(context["window"], context["overlap"],
                                                            context["solo"], ids["cls"], ids["sep"])
        graph = settings["graph"]
        self.session = optimized_session(directory / graph, settings.get("files", {}).get(graph))

    def predict_proba(self, records: list[dict]) -> np.ndarray:
        texts = data.sentences(records)
        scores = np.full(len(texts), np.nan)
        if not texts:
            return scores
        zeros, ones = np.zeros(len(texts), dtype=np.int64), np.ones(len(texts))
        if self.windows is None:
            ids = [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=True)]
            items, _ = sentence_items(ids, zeros, ones, self.settings["max_length"])
        else:
            tokens = [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]
            sizes = [len(record["samples"]) for record in records]
            items, _ = self.windows.items(tokens, sizes, zeros, ones)
        for idx in length_batches(items, self.batch_size, None):
            batch = [items[i] for i in idx]
            index = [row for item in batch for row in item.index]
            scores[index] = self._positive(batch)
        return scores

    def _positive(self, batch) -> np.ndarray:
        if self.windows is None:
            arrays, select = sentence_arrays(batch, self.pad_id), None
        else:
            context = self.settings["context"]
            arrays, select = context_arrays(batch, self.pad_id, context["pooling"], context["longformer"])
        logits = self.session.run(["logits"], {name: arrays[name] for name in self.settings["inputs"]})[0]
        if select is not None:
            logits = logits[select]
        return softmax_positive(logits)


def optimized_session(graph: Path, sha256: str | None):
    """An ONNX Runtime session of ``graph`` (a thread per physical core). ONNX Runtime optimizes a
    graph each time it loads it (0.08 of 0.12 s for the int8 MiniLM): the optimized graph is kept in
    the user's cache, by the graph's sha256 (None: not kept), ONNX Runtime's version and the
    machine, and loaded as it is from then on. No cache (read-only, full): optimized in memory."""
    import onnxruntime

    providers = ["CPUExecutionProvider"]
    if sha256 is None:
        return onnxruntime.InferenceSession(str(graph), providers=providers)
    cached = (user_cache_dir() / "onnx" /
              f"{sha256[:24]}-ort{onnxruntime.__version__}-{platform.machine()}.onnx")
    options = onnxruntime.SessionOptions()
    if cached.is_file():
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return onnxruntime.InferenceSession(str(cached), options, providers=providers)
        except Exception as exc:  # a cache from elsewhere, damaged: optimize again
            log.warning("optimized graph %s unusable (%s): optimizing %s again", cached, exc, graph.name)
            options = onnxruntime.SessionOptions()
    # The level whose result runs on any CPU (ALL adds layout changes for the machine at hand).
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    partial = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        options.optimized_model_filepath = str(partial)
        session = onnxruntime.InferenceSession(str(graph), options, providers=providers)
        partial.replace(cached)
        return session
    except Exception as exc:  # an unwritable cache (OSError, or ONNX Runtime's own errors)
        log.debug("optimized graph not cached (%s)", exc)
        partial.unlink(missing_ok=True)
        return onnxruntime.InferenceSession(str(graph), providers=providers)


def softmax_positive(logits: np.ndarray) -> np.ndarray:
    """P(class 1) of each row of logit pairs (the torch models' softmax, in float64)."""
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp[:, 1] / exp.sum(axis=1)


class TfidfScorer:
    """TF-IDF features and a logistic regression as scikit-learn computes them (``TfidfVectorizer``:
    lowercase, its token pattern, word n-grams, raw counts x smoothed idf, l2 norm; binary
    ``LogisticRegression.predict_proba``), from the arrays ``export`` took from the fitted pipeline."""

    def __init__(self, directory: Path, settings: dict):
        self.name = settings["name"]
        arrays = np.load(directory / TFIDF_FILE, allow_pickle=False)
        self.vocabulary = {term: i for i, term in enumerate(arrays["terms"].tolist())}
        self.idf, self.coef = arrays["idf"], arrays["coef"]
        self.intercept = float(arrays["intercept"])
        tfidf = settings["tfidf"]
        self.token_pattern = re.compile(tfidf["token_pattern"])
        self.lowercase = tfidf["lowercase"]
        self.ngrams = tuple(tfidf["ngram_range"])

    def predict_proba(self, records: list[dict]) -> np.ndarray:
        return np.array([self._score(text) for text in data.sentences(records)])

    def _score(self, text: str) -> float:
        counts: dict[int, int] = {}
        for term in self._terms(text.lower() if self.lowercase else text):
            column = self.vocabulary.get(term)
            if column is not None:
                counts[column] = counts.get(column, 0) + 1
        decision = self.intercept
        if counts:
            columns = np.fromiter(counts, dtype=np.int64, count=len(counts))
            weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts)) * self.idf[columns]
            decision += float(weights @ self.coef[columns]) / float(np.sqrt(weights @ weights))
        return 1.0 / (1.0 + np.exp(-decision))

    def _terms(self, text: str) -> list[str]:
        """scikit-learn's word analyzer: the tokens, then every n-gram up to the largest."""
        tokens = self.token_pattern.findall(text)
        low, high = self.ngrams
        terms = list(tokens) if low == 1 else []
        for n in range(max(low, 2), min(high, len(tokens)) + 1):
            terms.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
        return terms
