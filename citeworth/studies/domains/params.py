"""The domains stage's parameters (its ``params.yaml`` section)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from citeworth.core.params import Params
from citeworth.models.spec import AnyModelSpec, ContextSpec


class EmbeddingParams(Params):
    encoder: str = "embedded"
    """the paper: bert-base-uncased"""
    sentences_per_field: int | None = 2000
    """drawn with ``seed`` from all of the field (null: all)"""
    max_length: int = 128
    """Tokens per sentence."""
    batch_size: int = 64
    """Sentences embedded at once."""
    cluster_dims: int = 50
    """PCA dimensions the mixture clusters in (the paper's code: 50)"""
    seed: int = 1000
    """The sentences drawn and the mixture's initialisation."""


class DomainsParams(Params):
    data_dir: Path
    """The dataset (assemble's out_dir)."""
    group_by: Literal["field", "subject"] = "field"
    """What a row and a column of the matrix are: the paragraphs' CiteWorth field (the paper's Table 5)
    or their finer ``subject`` (eLife's subject headings, PLOS's second taxonomy level, ...: a study
    within the fields a corpus holds; paragraphs without a subject are left out)."""
    fields: list[str] | None = None
    """The fields (or subjects) of the matrix; null: every one with at least ``min_papers`` papers and
    ``min_train_sentences`` training sentences (the ``max_fields`` largest)."""
    min_papers: int = 3
    """A field needs this many papers (80/10/10 by paper, at least one paper per part)."""
    min_train_sentences: int = 0
    """A field chosen by ``fields: null`` needs this many sentences in its train part."""
    max_fields: int | None = None
    """With ``fields: null``, only the fields with the most training sentences (null: every one)."""
    min_fields: int = 3
    """The study needs this many fields."""
    out_of_domain_test: Literal["all", "test"] = "all"
    """What an out-of-domain cell tests on: all of the target field's papers, or its test part (the
    sentences its in-domain cell tests on, so every cell of a column scores the same sentences)."""
    split: list[float] = Field(default_factory=lambda: [0.8, 0.1, 0.1])
    """Each field's train/dev/test fractions of its papers."""
    split_seed: int = 1
    """Each field's split by paper."""
    cells: str | list[list[str]] = "all"
    """"all", or the cells to run now: [[train field, test field], ...] (names or slugs such as
    computer_science); [] runs none (an aggregation-only step).
    """
    aggregate: bool = True
    """read every cell and write the matrix, embeddings, plots and Table 5"""
    seeds: list[int] = Field(default_factory=lambda: [1])
    """Each cell is trained once per seed."""
    model: AnyModelSpec = Field(default_factory=lambda: ContextSpec(kind="context"))
    """The model of every cell: a ``citeworth.models.train`` model spec (the mapping of a train.catalog
    entry).
    """
    embedding: EmbeddingParams = Field(default_factory=EmbeddingParams)
    """Aharoni & Goldberg (2020) clusters of mean-pooled sentence embeddings."""
    cells_dir: Path
    """One metrics file per cell."""
    cache_dir: Path = Path("checkpoints/domains")
    """trained models per train field (outside DVC outs)"""
    metrics_path: Path
    """The matrix, sigma, clusters and rho (JSON)."""
    plots_dir: Path
    """Heatmap and PCA plot."""
    table_path: Path
    """Table 5 (Markdown)."""
    threads: int | None = None
    """torch CPU threads (null: torch's default)"""
