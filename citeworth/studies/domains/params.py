"""The domains stage's parameters (its ``params.yaml`` section)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class EmbeddingParams:
    encoder: str = "embedded"  # the paper: bert-base-uncased
    sentences_per_field: int | None = 2000  # drawn with ``seed`` from all of the field (null: all)
    max_length: int = 128
    batch_size: int = 64
    cluster_dims: int = 50  # PCA dimensions the mixture clusters in (the paper's code: 50)
    seed: int = 1000


@dataclass
class DomainsParams:
    data_dir: Path = Path("data/citeworth")
    # The fields of the matrix; null: every field with at least ``min_papers`` papers.
    fields: list[str] | None = None
    min_papers: int = 3
    min_fields: int = 3
    split: list[float] = field(default_factory=lambda: [0.8, 0.1, 0.1])
    split_seed: int = 1
    # "all", or the cells to run now: [[train field, test field], ...] (names or slugs such as
    # computer_science); [] runs none (an aggregation-only step).
    cells: str | list[list[str]] = "all"
    aggregate: bool = True  # read every cell and write the matrix, embeddings, plots and Table 5
    seeds: list[int] = field(default_factory=lambda: [1])
    # The model of every cell: a ``citeworth.models.train`` model spec (the mapping of a train.catalog entry).
    model: dict = field(default_factory=lambda: {"kind": "context", "encoder": "embedded"})
    embedding: EmbeddingParams = field(default_factory=EmbeddingParams)
    cells_dir: Path = Path("metrics/domains")
    cache_dir: Path = Path("checkpoints/domains")  # trained models per train field (outside DVC outs)
    metrics_path: Path = Path("metrics/domains.json")
    plots_dir: Path = Path("plots/domains")
    table_path: Path = Path("reports/table5.md")
    threads: int | None = None  # torch CPU threads (null: torch's default)
