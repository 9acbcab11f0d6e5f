"""The embedding analysis of Aharoni & Goldberg (2020), as the paper's code does it.

Mean-pooled encoder states per sentence, PCA, a Gaussian mixture with one component per field,
cluster purity, and the Euclidean distances between the field clusters (their centroids in the PCA
space); Pearson's ρ relates those distances to the F1 matrix.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from citeworth.core.schema import SPLITS
from citeworth.models import data
from citeworth.studies.domains.params import EmbeddingParams


def embed_fields(parts: dict, fields: list[str], params: EmbeddingParams) -> tuple[np.ndarray, list[str]]:
    """Mean-pooled last-layer states of sentences drawn from each field (all of its parts)."""
    from citeworth.models import encoders, loop  # torch: only the aggregation needs it

    texts, labels = [], []
    rng = np.random.default_rng(params.seed)
    for name in fields:
        sentences = data.sentences(r for p in SPLITS for r in parts[name][p])
        if params.sentences_per_field is not None and len(sentences) > params.sentences_per_field:
            sentences = [sentences[i] for i in np.sort(rng.choice(len(sentences), params.sentences_per_field,
                                                                  replace=False))]
        texts += sentences
        labels += [name] * len(sentences)
    encoder, tokenizer = encoders.load_encoder_and_tokenizer(params.encoder)
    device = loop.resolve_device("auto")
    encoder.to(device).eval()
    vectors = encoders.embed_texts(encoder, tokenizer, texts, params.max_length, params.batch_size, device)
    return vectors, labels


def cluster_fields(vectors: np.ndarray, labels: list[str], fields: list[str],
                   params: EmbeddingParams) -> dict:
    """PCA, then a Gaussian mixture with one component per field; purity and centroid distances."""
    from sklearn.decomposition import PCA
    from sklearn.mixture import GaussianMixture

    dims = min(params.cluster_dims, vectors.shape[1], len(vectors) - 1)
    reduced = PCA(n_components=dims, random_state=params.seed).fit_transform(vectors)
    mixture = GaussianMixture(n_components=len(fields), covariance_type="full", max_iter=150,
                              random_state=params.seed)
    assigned = mixture.fit(reduced).predict(reduced)
    label_array = np.array(labels)
    centroids = {f: reduced[label_array == f].mean(axis=0) for f in fields}
    return {
        "purity": round(cluster_purity(labels, assigned.tolist()), 6),
        "distances": {a: {b: round(float(np.linalg.norm(centroids[a] - centroids[b])), 6) for b in fields}
                      for a in fields},
        "cluster_dims": dims,
        "sentences": {f: int((label_array == f).sum()) for f in fields},
        "encoder": params.encoder,
        "points": PCA(n_components=2, random_state=params.seed).fit_transform(vectors),
    }


def cluster_purity(labels: list, clusters: list) -> float:
    """Share of points whose cluster's majority label is their own label."""
    if not labels:
        raise ValueError("cluster purity of no points")
    members: dict = defaultdict(lambda: defaultdict(int))
    for label, cluster in zip(labels, clusters, strict=True):
        members[cluster][label] += 1
    return sum(max(counts.values()) for counts in members.values()) / len(labels)


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r; None when either side is constant (undefined)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return round(float(np.corrcoef(x, y)[0, 1]), 6)
