"""The validate stage's parameters (the ``validate:`` section of params.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from citeworth.sources import InputSpec


@dataclass
class Bounds:
    """A share that must lie in [min, max]."""

    min: float = 0.0
    max: float = 1.0


@dataclass
class ValidateParams:
    data_dir: Path = Path("data/citeworth")
    # The spans-only baseline, validated with the same suite for the side-by-side marker rates
    # (never gating); null or a missing folder is reported in the summary, not an error.
    baseline_dir: Path | None = Path("data/baseline")
    # Raw papers for the raw-input suite, read with the curate stage's readers ([] skips it).
    raw_inputs: list[InputSpec] = field(default_factory=list)
    # Records read per raw shard (null: all); the raw suite checks the reader contract, which a
    # sample per shard exercises without re-reading a full corpus.
    raw_records_per_shard: int | None = 2000
    site_dir: Path = Path("reports/quality/site")
    summary_path: Path = Path("reports/quality/summary.json")
    min_chars: int = 21  # the paper's rule: longer than 20 characters
    max_chars: int = 2000  # the released CiteWorth's longest sentence has 1,447
    # Share of sentences allowed to carry a residual citation marker before the gate fails.
    marker_tolerance: float = 0.0
    cite_worthy_share: Bounds = field(default_factory=lambda: Bounds(0.05, 0.8))
    field_share: Bounds = field(default_factory=Bounds)
    # Share of distinct (sentence text, split) rows whose text also occurs in another split.
    max_cross_split_duplicates: float = 0.01
    # Share of raw records a reader may quarantine before the raw input is judged broken.
    max_bad_raw_records: float = 0.05
    examples: int = 5  # example rows shown per failed expectation
    # Critical checks downgraded to warnings, as "<suite>.<check>" (e.g. field shares on a corpus
    # that is not field-balanced); every other critical check fails the gate.
    soft_checks: list[str] = field(default_factory=list)
