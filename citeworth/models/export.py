"""``citeworth model export``: a trained model as one folder that scores without torch.

The folder (read by ``citeworth.models.exported``) holds the trained model's own files (the weights
and tokenizer in the Hugging Face layout; a TF-IDF model's scikit-learn pipeline), the network as an
ONNX graph (fp32, or int8 by ONNX Runtime's dynamic quantization), the settings its scorer needs,
and the model card (``citeworth.models.card``). Exporting checks itself: the fp32 graph must give
the torch model's scores on probe paragraphs (long ones crossing a context window included) within
``FP32_TOLERANCE``, else nothing is written.
"""

from __future__ import annotations

import logging
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from citeworth.core.io import sha256_file, write_json, write_text
from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY, THRESHOLD
from citeworth.core.version import tool_version
from citeworth.models import data
from citeworth.models.base import SPEC_FILE, TrainedModel, atomic_dir, load_trained
from citeworth.models.exported import (
    CARD_FILE,
    FORMAT,
    FORMAT_VERSION,
    SETTINGS_FILE,
    TFIDF_FILE,
    ExportError,
    OnnxScorer,
    TfidfScorer,
)
from citeworth.models.scoring import labelled_for_scoring

log = logging.getLogger(__name__)
PRECISIONS = ("int8", "fp32")
FP32_TOLERANCE = 1e-4  # largest |P(cite-worthy)| difference between the fp32 graph and torch
OPSET = 17
GRAPHS = {"fp32": "model.onnx", "int8": "model.int8.onnx"}
# Inputs per ONNX Runtime call on a CPU, measured on 2 cores scoring a 268-sentence paper with the int8
# MiniLM: 16 sentences (0.53 s; 8: 0.58, 64, the torch models' eval batch: 0.77), or windows holding
# about 512 tokens in all (256-token windows 2 at a time: 0.68 s; 1: 0.74, 16: 0.86).
SENTENCE_BATCH, WINDOW_TOKENS = 16, 512
PROBE_SENTENCES = [
    "Previous studies have shown that malaria transmission depends on mosquito density.",
    "We measured the samples twice.",
    "Deep neural networks achieve state-of-the-art results on many benchmarks, as reported by several "
    "groups over the last decade, and their success has been attributed to large datasets.",
    "Table 2 lists the primers.",
    "It has been argued that the effect is small.",
    "In this section we describe our method and the data we used, which come from two hospitals.",
]


def export_model(source: Path, out: Path, card: Callable[[dict], str], precision: str = "int8",
                 probe: list[dict] | None = None, package: str | None = None) -> dict:
    """Export the trained model saved in ``source`` into ``out`` (replaced whole, atomically); returns
    its settings. ``card(settings)``: the model card's text; ``probe``: paragraphs (dataset records)
    the fp32 graph must score as torch does, beside built-in ones; ``package``: the name of its
    model package (default: the model's)."""
    if precision not in PRECISIONS:
        raise ExportError(f"precision {precision!r}: one of {', '.join(PRECISIONS)}")
    source, out = Path(source), Path(out)
    trained = load_trained(source)
    spec = trained.spec
    records = [labelled_for_scoring(record) for record in _probe_records(trained) + list(probe or [])]
    with atomic_dir(out) as folder:
        for path in sorted(source.iterdir()):
            if path.is_file() and path.name not in (CARD_FILE, SPEC_FILE):
                shutil.copy2(path, folder / path.name)
        if spec.kind == "tfidf_lr":
            settings = _export_tfidf(trained, folder, records)
        else:
            settings = _export_onnx(trained, folder, precision, records)
        settings = {"format": FORMAT, "format_version": FORMAT_VERSION, "citeworth": tool_version(),
                    "name": spec.name, "package": package or spec.name, "label": spec.label or spec.name,
                    "kind": spec.kind, "threshold": THRESHOLD,
                    "labels": {"0": NOT_CITE_WORTHY, "1": CITE_WORTHY}, **settings}
        write_text(folder / CARD_FILE, card(settings))
        settings["files"] = {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.is_file()}
        write_json(folder / SETTINGS_FILE, settings)
    return settings


def _probe_records(trained: TrainedModel) -> list[dict]:
    """Paragraphs of one to many sentences; one longer than a context model's window."""
    paragraphs = [PROBE_SENTENCES[:1], PROBE_SENTENCES[1:4], PROBE_SENTENCES, PROBE_SENTENCES[3:]]
    window = trained.stats.get("window") or 0
    if window:
        repeats = window // 8 + 2  # well over ``window`` tokens: several windows
        paragraphs.append((PROBE_SENTENCES * repeats)[: 6 * repeats])
    return [{"samples": [{"text": text} for text in texts]} for texts in paragraphs]


def _largest_difference(trained: TrainedModel, scorer, records: list[dict]) -> float:
    return float(np.max(np.abs(trained.predict_proba(records) - scorer.predict_proba(records))))


def _checked(difference: float, tolerance: float, what: str) -> float:
    if not difference <= tolerance:  # NaN too
        raise ExportError(f"{what} scores differ from the trained model's by up to {difference:.3g} "
                          f"(more than {tolerance:g}): not exported")
    return round(difference, 9)


def _export_tfidf(trained: TrainedModel, folder: Path, records: list[dict]) -> dict:
    """The fitted vectorizer's vocabulary and idf and the regression's weights as arrays, after
    checking the pipeline uses only what ``exported.TfidfScorer`` computes."""
    vectorizer, regression = trained.pipeline.named_steps["tfidf"], trained.pipeline.named_steps["lr"]
    expected = {"analyzer": "word", "binary": False, "norm": "l2", "use_idf": True, "smooth_idf": True,
                "sublinear_tf": False, "stop_words": None, "strip_accents": None, "preprocessor": None,
                "tokenizer": None}
    if unsupported := {k: getattr(vectorizer, k) for k, v in expected.items() if getattr(vectorizer, k) != v}:
        raise ExportError(f"the TF-IDF model sets {unsupported}, which the exported scorer does not compute")
    if list(regression.classes_) != [0, 1]:
        raise ExportError(f"the regression's classes are {list(regression.classes_)}, not [0, 1]")
    terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)
    with open(folder / TFIDF_FILE, "wb") as handle:  # np.savez(path) would add ".npz" to any other name
        np.savez(handle, terms=np.array(terms, dtype=str), idf=vectorizer.idf_, coef=regression.coef_[0],
                 intercept=np.array(regression.intercept_[0]))
    settings = {"runtime": "tfidf", "precision": "fp64",
                "tfidf": {"lowercase": vectorizer.lowercase, "token_pattern": vectorizer.token_pattern,
                          "ngram_range": list(vectorizer.ngram_range)}}
    scorer = TfidfScorer(folder, {**settings, "name": trained.spec.name})
    settings["agreement"] = {"max_abs_diff": _checked(_largest_difference(trained, scorer, records),
                                                      FP32_TOLERANCE, "the exported TF-IDF"),
                             "sentences": len(data.sentences(records))}
    return settings


class _Logits(torch.nn.Module):
    """The trained network with positional inputs, returning only the logits: what ONNX traces."""

    def __init__(self, module: torch.nn.Module, names: list[str]):
        super().__init__()
        self.module, self.names = module, names

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        output = self.module(**dict(zip(self.names, inputs, strict=True)))
        return output.logits if hasattr(output, "logits") else output


def _export_onnx(trained, folder: Path, precision: str, records: list[dict]) -> dict:
    tokenizer, spec, adapter = trained.tokenizer, trained.spec, trained.adapter
    tokenizer.backend_tokenizer.save(str(folder / "tokenizer.json"))
    batch = max(1, WINDOW_TOKENS // adapter.window) if spec.kind == "context" else SENTENCE_BATCH
    settings = {"runtime": "onnx", "tokenizer": "tokenizer.json", "max_length": spec.max_length,
                "batch_size": batch,
                "special_ids": {"cls": tokenizer.cls_token_id, "sep": tokenizer.sep_token_id,
                                "pad": tokenizer.pad_token_id}}
    if spec.kind == "context":
        settings["context"] = {"window": adapter.window, "overlap": adapter.overlap, "solo": adapter.solo,
                               "pooling": adapter.pooling, "longformer": adapter.longformer}
    batch = adapter.collate(adapter.items(records[1:3]))  # several rows of several lengths: no size is fixed
    names = list(batch.inputs)
    settings["inputs"] = names
    trained.module.to("cpu").eval()
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the tracer's warnings about Python values in the graph
        torch.onnx.export(_Logits(trained.module, names), tuple(batch.inputs[n] for n in names),
                          str(folder / GRAPHS["fp32"]), input_names=names, output_names=["logits"],
                          opset_version=OPSET, dynamic_axes=_dynamic_axes(names), dynamo=False)
    trained.device = torch.device("cpu")
    agreement = {"sentences": len(data.sentences(records))}
    fp32 = OnnxScorer(folder, {**settings, "name": spec.name, "graph": GRAPHS["fp32"]})
    agreement["fp32_max_abs_diff"] = _checked(_largest_difference(trained, fp32, records), FP32_TOLERANCE,
                                              "the exported fp32 graph's")
    graph = GRAPHS[precision]
    if precision == "int8":
        _quantize(folder / GRAPHS["fp32"], folder / graph)
        int8 = OnnxScorer(folder, {**settings, "name": spec.name, "graph": graph})
        agreement["int8_max_abs_diff"] = round(_largest_difference(trained, int8, records), 6)
        (folder / GRAPHS["fp32"]).unlink()
    return {**settings, "graph": graph, "precision": precision, "agreement": agreement}


def _dynamic_axes(names: list[str]) -> dict[str, dict[int, str]]:
    per_sentence = ("sep_batch", "sep_pos", "span_start")
    return {"logits": {0: "rows"},
            **{n: {0: "sentences"} if n in per_sentence else {0: "batch", 1: "tokens"} for n in names}}


def _quantize(fp32: Path, int8: Path) -> None:
    """int8 weights, one scale per output channel, activations quantized at run time (ONNX Runtime's
    dynamic quantization). Per channel, measured on the demo's MiniLM sentence model: test ROC AUC
    0.6801 against fp32's 0.6817, as fast; one scale per tensor: 0.6697."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
