"""The domains stage's parameters (its ``params.yaml`` section)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from citeworth.core.params import Params
from citeworth.models.spec import AnyModelSpec, ContextSpec


class EmbeddingParams(Params):
    encoder: str = "embedded"
    """the paper: bert-base-uncased"""
    sentences_per_field: int | None = 2000
    """drawn with ``seed`` from all of the field (null: all)"""
    max_length: int = 128
    batch_size: int = 64
    cluster_dims: int = 50
    """PCA dimensions the mixture clusters in (the paper's code: 50)"""
    seed: int = 1000


class DomainsParams(Params):
    data_dir: Path
    fields: list[str] | None = None
    """The fields of the matrix; null: every field with at least ``min_papers`` papers."""
    min_papers: int = 3
    min_fields: int = 3
    split: list[float] = Field(default_factory=lambda: [0.8, 0.1, 0.1])
    split_seed: int = 1
    cells: str | list[list[str]] = "all"
    """"all", or the cells to run now: [[train field, test field], ...] (names or slugs such as
    computer_science); [] runs none (an aggregation-only step).
    """
    aggregate: bool = True
    """read every cell and write the matrix, embeddings, plots and Table 5"""
    seeds: list[int] = Field(default_factory=lambda: [1])
    model: AnyModelSpec = Field(default_factory=lambda: ContextSpec(kind="context"))
    """The model of every cell: a ``citeworth.models.train`` model spec (the mapping of a train.catalog
    entry).
    """
    embedding: EmbeddingParams = Field(default_factory=EmbeddingParams)
    cells_dir: Path
    cache_dir: Path = Path("checkpoints/domains")
    """trained models per train field (outside DVC outs)"""
    metrics_path: Path
    plots_dir: Path
    table_path: Path
    threads: int | None = None
    """torch CPU threads (null: torch's default)"""
