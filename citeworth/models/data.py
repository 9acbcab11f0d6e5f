"""Dataset records (the released CiteWorth shape) as model inputs: labels, sentences, fields, weights."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from citeworth.core.errors import StageFailed
from citeworth.core.io import read_jsonl
from citeworth.core.schema import CITE_WORTHY, COLLECTION, FIELD_OF_STUDY, NOT_CITE_WORTHY, SPLITS

# Class ids: cite-worthy is the positive class.
LABEL_IDS = {NOT_CITE_WORTHY: 0, CITE_WORTHY: 1}


def split_files(data_dir: Path) -> list[Path]:
    """The dataset's ``<split>.jsonl`` files; StageFailed naming those missing."""
    files = [Path(data_dir) / f"{s}.jsonl" for s in SPLITS]
    if missing := [path.name for path in files if not path.exists()]:
        raise StageFailed(f"{data_dir} lacks {', '.join(missing)}: run assemble first")
    return files


def load_splits(data_dir: Path) -> dict[str, list[dict]]:
    """Every split's records; StageFailed when a split has no sentence."""
    splits = {path.stem: list(read_jsonl(path)) for path in split_files(data_dir)}
    for split, records in splits.items():
        if not sentences(records):
            raise StageFailed(f"{data_dir}/{split}.jsonl has no sentences")
    return splits


def label_of(sample: dict) -> int:
    try:
        return LABEL_IDS[sample["label"]]
    except KeyError:
        raise ValueError(f"sample label {sample.get('label')!r} is not one of {sorted(LABEL_IDS)}") from None


def field_of(record: dict) -> str:
    fields = record.get(FIELD_OF_STUDY) or ["unknown"]
    return fields[0]


def sentences(records: Iterable[dict]) -> list[str]:
    """Every sentence text, in record order then sample order (the order all scores follow)."""
    return [s["text"] for r in records for s in r["samples"]]


def labels(records: Iterable[dict]) -> np.ndarray:
    return np.array([label_of(s) for r in records for s in r["samples"]], dtype=np.int64)


def fields(records: Iterable[dict]) -> list[str]:
    return [field_of(r) for r in records for _ in r["samples"]]


def collections(records: Iterable[dict]) -> list[str]:
    """Each sentence's collection (the curate input it came from; its reader where none was named)."""
    return [r.get(COLLECTION) or r.get("source") or "unknown" for r in records for _ in r["samples"]]


def sample_paragraphs(records: list[dict], max_sentences: int | None, seed: int) -> list[dict]:
    """Whole paragraphs, in a seeded random order, until they hold ``max_sentences`` sentences (the
    paragraph that reaches it included), returned in dataset order; every record when the budget
    covers them all. One permutation per seed, so a smaller budget's sample is part of a larger's."""
    if max_sentences is None or len(sentences(records)) <= max_sentences:
        return records
    chosen, total = [], 0
    for index in np.random.default_rng(seed).permutation(len(records)):
        chosen.append(int(index))
        total += len(records[index]["samples"])
        if total >= max_sentences:
            break
    return [records[i] for i in sorted(chosen)]


def balanced_class_weights(y: np.ndarray, n_classes: int = 2) -> np.ndarray:
    """sklearn's "balanced" weights, n / (k * count_c), as the paper's code uses; absent classes get 1."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    weights = np.ones(n_classes)
    present = counts > 0
    weights[present] = len(y) / (n_classes * counts[present])
    return weights
