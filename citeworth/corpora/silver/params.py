"""The ``silver`` section of params.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from citeworth.core.params import Params
from citeworth.corpora.silver.cleaning import RULES
from citeworth.models.siamese import SiameseParams
from citeworth.sources import InputSpec

CITING_FROM = ("full_text", "dataset")
METHODS = ("embedding", "tfidf")


class TfidfParams(Params):
    ngram_max: int = 1
    min_df: int = 1
    sublinear_tf: bool = True


class SimilarityParams(Params):
    method: Literal[METHODS] = "embedding"
    """embedding (a sentence encoder) | tfidf (fitted on the corpus' sentences)"""
    encoder: str = "embedded"
    """embedding: "embedded" (MiniLM), a hub name or a local path"""
    max_length: int = 128
    """tokens per sentence"""
    batch_size: int = 64
    device: str = "auto"
    decimals: int = 4
    """cosines are rounded to this many places before thresholding"""
    cache_dir: Path = Path("cache/silver")
    """embeddings by (encoder digest, text hash); outside DVC"""
    tfidf: TfidfParams = Field(default_factory=TfidfParams)


class CutoffParams(Params):
    """The grid of cutoffs tried on the gold file's dev pairs (inclusive, in steps)."""

    start: float = 0.0
    stop: float = 1.0
    step: float = 0.01


class SilverParams(Params):
    inputs: list[InputSpec]
    """every paper the readers produce goes into the paper index"""
    data_dir: Path
    """the curated dataset: which papers cite, and their split"""
    citing: Literal[CITING_FROM] = "full_text"
    """full_text: every sentence of the curated papers' full text; dataset: only the curated samples"""
    max_citations: int = Field(1, ge=1)
    """a citing sentence cites 1 to max_citations papers, every citation resolved"""
    min_chars: int = 20
    """shorter sentences (after cleaning) are neither citing nor cited"""
    spacy_model: str | None = None
    """the sentence splitter, as curate.rules.spacy_model"""
    cleaning: list[str] = Field(default_factory=lambda: list(RULES))
    similarity: SimilarityParams = Field(default_factory=SimilarityParams)
    gold_path: Path
    positive_score: int = 4
    """gold scores 0-5; this and above is a positive pair (Houngbo & Mercer)"""
    cutoff: CutoffParams = Field(default_factory=CutoffParams)
    seed: int = 1
    """the negatives drawn for each citing sentence"""
    out_dir: Path
    reports_dir: Path
    metrics_path: Path
    model: SiameseParams = Field(default_factory=SiameseParams)
    models_dir: Path
    checkpoints_dir: Path = Path("checkpoints/silver")
    threads: int | None = 1
    """torch CPU threads; null = torch's default"""
