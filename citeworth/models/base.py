"""``TrainedModel``: what every model kind returns from training, scores with, saves and reloads."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from citeworth.core.io import write_json, write_text
from citeworth.core.params import build, to_dict
from citeworth.models.spec import AnyModelSpec, ModelSpec

SPEC_FILE = "citeworth_model.json"
# Each kind's module provides fit(spec, train, dev, seed, work_dir, live_dir, finished_dir) and
# load(path, spec).
KIND_MODULES = {
    "tfidf_lr": "citeworth.models.tfidf",
    "crnn": "citeworth.models.sentence",
    "transformer": "citeworth.models.sentence",
    "sentence": "citeworth.models.sentence",
    "context": "citeworth.models.context",
}


class TrainedModel(ABC):
    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.history: list[dict] = []  # dev evaluations during training
        self.stats: dict = {}  # facts of the fit worth reporting (e.g. PU's c, windows, truncations)

    @abstractmethod
    def predict_proba(self, records: list[dict]) -> np.ndarray:
        """P(cite-worthy) of every sentence of ``records``, in record then sample order."""

    @abstractmethod
    def save_files(self, directory: Path) -> None:
        """Write the model's own files (weights, tokenizer, ...) into ``directory``."""

    @property
    @abstractmethod
    def n_parameters(self) -> int: ...

    def save(self, directory: Path, extra: dict | None = None, card: str | None = None) -> None:
        """Save atomically (the directory appears whole or not at all), with an optional model card."""
        with atomic_dir(Path(directory)) as tmp:
            self.save_files(tmp)
            if card is not None:
                write_text(tmp / "README.md", card)
            write_json(tmp / SPEC_FILE, {"spec": to_dict(self.spec), "stats": self.stats, **(extra or {})})


def kind_module(kind: str):
    return importlib.import_module(KIND_MODULES[kind])


def load_trained(directory: Path) -> TrainedModel:
    """Reload a model saved by ``TrainedModel.save`` (any kind)."""
    directory = Path(directory)
    spec_file = directory / SPEC_FILE
    if not spec_file.exists():
        raise FileNotFoundError(f"{directory} is not a saved citeworth model (no {SPEC_FILE})")
    saved = json.loads(spec_file.read_text())
    spec = build(AnyModelSpec, saved["spec"], where=str(spec_file))
    model = kind_module(spec.kind).load(directory, spec)
    model.stats = saved.get("stats", {})
    return model


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_dir(path: Path) -> Iterator[Path]:
    """A temporary sibling directory that replaces ``path`` only if the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    tmp.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the saved model is an ordinary directory
    try:
        yield tmp
        if path.exists():
            old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".old"))
            path.rename(old / "previous")
            tmp.rename(path)
            shutil.rmtree(old)
        else:
            tmp.rename(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
