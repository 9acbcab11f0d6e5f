"""TF-IDF features + logistic regression (C = 0.1151, balanced class weights), the paper's first baseline."""

from __future__ import annotations

from pathlib import Path

import joblib
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from citeworth.models import data
from citeworth.models.base import TrainedModel
from citeworth.models.spec import ModelSpec

PIPELINE_FILE = "pipeline.joblib"


class TfidfModel(TrainedModel):
    def __init__(self, spec: ModelSpec, pipeline: Pipeline):
        super().__init__(spec)
        self.pipeline = pipeline

    def predict_proba(self, records: list[dict]) -> np.ndarray:
        texts = data.sentences(records)
        if not texts:
            return np.zeros(0)
        positive = list(self.pipeline.classes_).index(1)
        return self.pipeline.predict_proba(texts)[:, positive]

    def save_files(self, directory: Path) -> None:
        # sklearn caches id(stop_words), a memory address, to skip re-validating stop words; without
        # it the pickle is byte-identical across runs (sklearn re-validates when it is missing).
        vars(self.pipeline.named_steps["tfidf"]).pop("_stop_words_id", None)
        joblib.dump(self.pipeline, directory / PIPELINE_FILE)

    @property
    def n_parameters(self) -> int:
        clf = self.pipeline.named_steps["lr"]
        return int(clf.coef_.size + clf.intercept_.size)


def fit(spec: ModelSpec, train: list[dict], dev: list[dict], seed: int, work_dir=None, live_dir=None,
        finished_dir=None):
    """Fitted in a second: no checkpoints, no log, nothing kept to reuse (the dirs are ignored)."""
    params = spec.tfidf
    pipeline = Pipeline([
        ("tfidf", TfidfVectorizer(ngram_range=(1, params.ngram_max), min_df=params.min_df,
                                  max_features=params.max_features, sublinear_tf=False)),
        ("lr", LogisticRegression(C=params.C, class_weight=params.class_weight, max_iter=params.max_iter,
                                  random_state=seed)),
    ])
    y = data.labels(train)
    if len(set(y.tolist())) < 2:
        raise ValueError("the training split needs both cite-worthy and non-cite-worthy sentences")
    pipeline.fit(data.sentences(train), y)
    return TfidfModel(spec, pipeline)


def load(directory: Path, spec: ModelSpec) -> TfidfModel:
    return TfidfModel(spec, joblib.load(directory / PIPELINE_FILE))
