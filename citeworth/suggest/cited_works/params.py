"""The ``works`` section of params.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from citeworth.core.params import Params
from citeworth.core.schema import SPLITS
from citeworth.sources import InputSpec
from citeworth.suggest.cited_works.build import CONTEXT_SOURCES, FULL_TEXT


class Bm25Params(Params):
    k1: float = 0.9
    """term-frequency saturation (a work's text is its title and many citing sentences: 0.9 and b 0.4
    beat Lucene's 1.2 / 0.75 on the study's dev sentences, benchmarks/works.py)"""
    b: float = 0.4
    """document-length normalisation"""


class DenseParams(Params):
    encoder: str | None = None
    """embed each work's title with this encoder for the dense ranking ("embedded": the MiniLM, or
    a hub name or local path); null: lexical ranking only. The MiniLM costs about 1.5 CPU-minutes
    per 10,000 titles on this project's 2-core machine (a GPU: seconds), so the study leaves it off;
    it lifted the study's test Recall@10 from 0.371 to 0.402 (benchmarks/results/works_dense.json)."""
    max_length: int = 32
    """tokens of a title (longer ones are cut)"""
    batch_size: int = 64
    """titles embedded at once (sorted by length)"""
    device: str = "auto"
    """auto | cpu | cuda | cuda:N"""
    hnsw_m: int = 16
    """links per node of the HNSW graph (nmslib's M)"""
    hnsw_ef_construction: int = 200
    """the graph's build-time beam (nmslib's efConstruction)"""


class WorksParams(Params):
    inputs: list[InputSpec]
    """the papers curate reads: the indexed papers' bibliographies and full text are read from them"""
    data_dir: Path
    """the curated dataset: which papers are indexed (the copy assemble kept) and their cite-worthy samples"""
    splits: list[Literal[SPLITS]] = Field(default_factory=lambda: list(SPLITS))
    """the dataset splits whose papers' references are indexed (benchmarks/works.py: train only)"""
    contexts: Literal[CONTEXT_SOURCES] = FULL_TEXT
    """a work's citing sentences: full_text, every sentence of the indexed papers' body that cites it;
    dataset, only the curated cite-worthy samples citing it (through their ref_ids)"""
    max_contexts: int = Field(20, ge=0)
    """citing sentences per work in its BM25 text (all are stored)"""
    bm25: Bm25Params = Field(default_factory=Bm25Params)
    """The lexical ranking's weights."""
    dense: DenseParams = Field(default_factory=DenseParams)
    """The dense ranking (off by default)."""
    threads: int | None = 1
    """torch CPU threads for the encoder; null = torch's default"""
    out_dir: Path
    """the index folder (citeworth check --suggest --works OUT_DIR)"""
    stats_path: Path
    """counts: papers, references, works, contexts, sizes and build seconds (JSON)"""
