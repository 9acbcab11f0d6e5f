"""The ``silver`` section of params.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from citeworth.core.params import Params
from citeworth.corpora.silver.cleaning import RULES
from citeworth.corpora.silver.siamese import SiameseParams
from citeworth.sources import InputSpec

CITING_FROM = ("full_text", "dataset")
METHODS = ("embedding", "tfidf")


class TfidfParams(Params):
    ngram_max: int = 1
    """The longest n-gram."""
    min_df: int = 1
    """Ignore terms in fewer sentences than this."""
    sublinear_tf: bool = True
    """1 + log(tf) instead of tf."""


class SimilarityParams(Params):
    method: Literal[METHODS] = "embedding"
    """embedding (a sentence encoder) | tfidf (fitted on the corpus' sentences)"""
    encoder: str = "embedded"
    """embedding: "embedded" (MiniLM), a hub name or a local path"""
    max_length: int = 128
    """tokens per sentence"""
    batch_size: int = 64
    """Sentences embedded at once."""
    device: str = "auto"
    """auto | cpu | cuda | cuda:N"""
    decimals: int = 4
    """cosines are rounded to this many places before thresholding"""
    cache_dir: Path = Path("cache/silver")
    """embeddings by (encoder digest, text hash); outside DVC"""
    tfidf: TfidfParams = Field(default_factory=TfidfParams)
    """The TF-IDF vectoriser (method tfidf)."""


class CutoffParams(Params):
    """The grid of cutoffs tried on the gold file's dev pairs (inclusive, in steps)."""

    start: float = 0.0
    """The lowest cutoff tried."""
    stop: float = 1.0
    """The highest cutoff tried."""
    step: float = 0.01
    """The grid's step."""


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
    """Cleaning rules applied to both sentences, in order (the paper's §4.2)."""
    similarity: SimilarityParams = Field(default_factory=SimilarityParams)
    """How sentences are compared (cosine similarity of vectors)."""
    gold_path: Path
    """Hand-written pairs scored 0-5 (see gold/README.md): tune the cutoff, score the annotator."""
    positive_score: int = 4
    """gold scores 0-5; this and above is a positive pair (Houngbo & Mercer)"""
    cutoff: CutoffParams = Field(default_factory=CutoffParams)
    """The grid of cutoffs tried on the gold dev pairs: max MCC, then balanced accuracy, then the lower."""
    seed: int = 1
    """the negatives drawn for each citing sentence"""
    out_dir: Path
    """{train,dev,test}.jsonl, split by the citing paper's curated split."""
    reports_dir: Path
    """cutoff.json, report.md and quality/ (Data Docs)."""
    metrics_path: Path
    """The siamese models' metrics."""
    model: SiameseParams = Field(default_factory=SiameseParams)
    """The siamese classifier trained on the pairs."""
    models_dir: Path
    """silver/ (trained on the silver corpus) and gold/ (on the gold dev pairs)."""
    checkpoints_dir: Path = Path("checkpoints/silver")
    """Resumable state of unfinished fits (outside DVC outs)."""
    threads: int | None = 1
    """torch CPU threads; null = torch's default"""
