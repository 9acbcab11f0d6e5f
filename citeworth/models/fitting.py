"""Fitting and scoring one model on dataset records: what the train stage and the studies share.

``model_spec`` reads a catalog-style mapping, ``fit_model`` trains any model kind (early stopping
on dev), ``evaluate`` scores a trained model on records.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from citeworth.models import data
from citeworth.models.base import TrainedModel, kind_module
from citeworth.models.evaluation import classification_metrics
from citeworth.models.spec import ModelSpec


def model_spec(name: str, spec: ModelSpec) -> ModelSpec:
    """Catalog entry ``spec`` named ``name`` (its outputs' folder and file names)."""
    return spec.model_copy(update={"name": name})


def fit_model(model: ModelSpec, train: list[dict], dev: list[dict], seed: int, out_dir: Path | None,
              live_dir: Path | None = None, finished_dir: Path | None = None) -> TrainedModel:
    """Train one model on dataset records; early stopping on ``dev``.

    ``out_dir`` holds the fit's resumable checkpoints (removed when it completes; a rerun after a
    crash resumes there); ``live_dir`` receives the DVCLive log; ``finished_dir`` keeps finished
    fits for another model with the same inputs (``loop.FinishedFits``). Save the result with
    ``TrainedModel.save``.
    """
    random.seed(seed)
    np.random.seed(seed)
    train = data.sample_paragraphs(train, model.max_train_sentences, seed)
    trained = kind_module(model.kind).fit(model, train, dev_sample(model, dev, seed), seed, out_dir, live_dir,
                                          finished_dir)
    trained.stats = {**(trained.stats or {}), "train_sentences": len(data.sentences(train)),
                     "train_paragraphs": len(train)}
    return trained


def dev_sample(model: ModelSpec, dev: list[dict], seed: int) -> list[dict]:
    """The dev paragraphs a fit stops early on and its seed is chosen by (``max_dev_sentences``)."""
    return data.sample_paragraphs(dev, model.max_dev_sentences, seed)


def evaluate(trained: TrainedModel, records: list[dict]) -> dict:
    """P/R/F1 of the cite-worthy class, per field, confusion counts and average precision."""
    return metrics_for(records, trained.predict_proba(records))


def metrics_for(records: list[dict], scores: np.ndarray) -> dict:
    return classification_metrics(data.labels(records), scores, data.fields(records),
                                  data.collections(records))

