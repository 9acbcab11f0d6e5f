"""Figure 1: the F1 heatmap and the PCA scatter of sentence embeddings by field (PNG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from citeworth.core.io import atomic_write
from citeworth.studies.domains.tables import abbreviation


def _save_figure(figure, path: Path) -> None:
    with atomic_write(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=120, metadata={"Software": None})


def heatmap(f1: np.ndarray, fields: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    abbr = [abbreviation(f) for f in fields]
    figure, axes = plt.subplots(figsize=(1.2 * len(fields) + 2, 1.0 * len(fields) + 1.5))
    image = axes.imshow(100 * f1, cmap="viridis")
    axes.set_xticks(range(len(fields)), abbr)
    axes.set_yticks(range(len(fields)), abbr)
    axes.set_xlabel("test field")
    axes.set_ylabel("train field")
    for i in range(len(fields)):
        for j in range(len(fields)):
            axes.text(j, i, f"{100 * f1[i, j]:.1f}", ha="center", va="center", color="white", fontsize=9)
    figure.colorbar(image, ax=axes, label="F1 ×100")
    axes.set_title("Cite-worthiness F1: train × test field")
    figure.tight_layout()
    _save_figure(figure, path)
    plt.close(figure)


def scatter(points: np.ndarray, labels: list[str], fields: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label_array = np.array(labels)
    figure, axes = plt.subplots(figsize=(7, 6))
    for name in fields:
        chosen = points[label_array == name]
        axes.scatter(chosen[:, 0], chosen[:, 1], s=6, alpha=0.6, label=name)
        centre = chosen.mean(axis=0)
        axes.annotate(abbreviation(name), centre, fontsize=11, weight="bold")
    axes.set_xticks([])
    axes.set_yticks([])
    axes.legend(markerscale=3, fontsize=8)
    axes.set_title("Sentence embeddings by field (mean-pooled, PCA 2-D)")
    figure.tight_layout()
    _save_figure(figure, path)
    plt.close(figure)
