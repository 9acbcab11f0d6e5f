"""The validate stage's parameters (the ``validate:`` section of params.yaml)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from citeworth.core.params import Params
from citeworth.sources import InputSpec


class Bounds(Params):
    """A share that must lie in [min, max]."""

    min: float = 0.0
    """The lowest share allowed."""
    max: float = 1.0
    """The highest share allowed."""


class ValidateParams(Params):
    data_dir: Path
    """The dataset validated (assemble's out_dir)."""
    curated_dir: Path | None
    """The curated shards the dataset was assembled from (assemble's in_dir): their papers/ files
    give each dataset paper's identifiers, so that no paper is in two splits in any copy (null: a
    paper is known by its paper id alone)."""
    baseline_dir: Path | None
    """The spans-only baseline, validated with the same suite for the side-by-side marker rates (never
    gating); null or a missing folder is reported in the summary, not an error.
    """
    raw_inputs: list[InputSpec] = Field(default_factory=list)
    """Raw papers for the raw-input suite, read with the curate stage's readers ([] skips it)."""
    raw_records_per_shard: int | None = 2000
    """Records read per raw shard (null: all); the raw suite checks the reader contract, which a sample
    per shard exercises without re-reading a full corpus.
    """
    site_dir: Path
    """Great Expectations' Data Docs."""
    summary_path: Path
    """The gate's summary (JSON): every check, its severity and result."""
    min_chars: int = 21
    """the paper's rule: longer than 20 characters"""
    max_chars: int = 2000
    """the released CiteWorth's longest sentence has 1,447"""
    marker_tolerance: float = 0.0
    """Share of sentences allowed to carry a residual citation marker before the gate fails."""
    cite_worthy_share: Bounds = Field(default_factory=lambda: Bounds(min=0.05, max=0.8))
    """Share of cite-worthy sentences allowed per split."""
    field_share: Bounds = Field(default_factory=Bounds)
    """Each field's share of each split's paragraphs."""
    max_cross_split_duplicates: float = 0.01
    """Share of distinct (sentence text, split) rows whose text also occurs in another split."""
    max_bad_raw_records: float = 0.05
    """Share of raw records a reader may quarantine before the raw input is judged broken."""
    examples: int = 5
    """example rows shown per failed expectation"""
    source: str | None = None
    """The source corpus the dataset was built from (params.yaml: {{download.source}}): picks the
    soft_checks that apply."""
    soft_checks: dict[str, list[str]] = Field(default_factory=dict)
    """Critical checks downgraded to warnings for one source, as {source: ["<suite>.<check>", ...]}
    (e.g. field shares of the demo corpus, which is not field-balanced); every other critical check,
    and every check of any other source, fails the gate."""

    @property
    def soft_for_source(self) -> list[str]:
        """The checks downgraded for this dataset's source."""
        return self.soft_checks.get(self.source, []) if self.source else []
