"""The curation engine on the real mirrored papers, read by the project's readers: the unarXive
sample ({{cite:...}} placeholders) and the S2ORC JSON test papers (numeric and author-year spans)."""

from __future__ import annotations

import json
import tarfile
from collections import Counter

import pytest

from citeworth.curate.config import CurationConfig
from citeworth.curate.engine import Curator
from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.text.sentences import SentenceSplitter

UNARXIVE = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"
S2ORC = "github/allenai/s2orc-doc2json/tests/s2orc/*/*.json"
S2ORC_METADATA = "github/allenai/s2orc/data/metadata/sample.jsonl"


@pytest.fixture(scope="module")
def splitter():
    return SentenceSplitter()


@pytest.fixture(scope="module")
def unarxive_papers(mirror, tmp_path_factory):
    folder = tmp_path_factory.mktemp("unarxive")
    with tarfile.open(mirror / UNARXIVE) as archive:
        archive.extractall(folder, filter="data")
    shards = discover_shards("unarxive", str(folder / "**" / "*.jsonl"))
    return [p for shard in shards for p in read_shard(shard) if not isinstance(p, BadRecord)]


@pytest.fixture(scope="module")
def s2orc_papers(mirror):
    shards = discover_shards("s2orc_json", str(mirror / S2ORC), str(mirror / S2ORC_METADATA))
    return [p for shard in shards for p in read_shard(shard) if not isinstance(p, BadRecord)]


def curate(papers, splitter, **rules):
    curator = Curator(CurationConfig(**rules), splitter)
    return list(curator.curate(papers)), curator.stats


def test_unarxive_sample_yields_clean_paragraphs(unarxive_papers, splitter):
    records, stats = curate(unarxive_papers, splitter)
    assert len(unarxive_papers) == 49 and stats.papers == 49
    assert stats.kept > 0 and stats.cite_worthy > 0
    assert stats.paragraphs == stats.kept + sum(stats.paragraphs_rejected.values())
    assert stats.candidates < stats.paragraphs_in_sections / 5  # most rejections happen before splitting
    samples = [s for r in records for s in r["samples"]]
    assert all("{{" not in s["text"] and "\n" not in s["text"] for s in samples)
    cited = [s for s in samples if s["label"] == "check-worthy"]
    assert cited and all(t.startswith("{{cite:") for s in cited for t in s["citation_text"])
    assert Counter(r["mag_field_of_study"][0] for r in records) == stats.fields
    print(f"\nunarXive sample: {stats.kept} paragraphs, {stats.sentences} sentences "
          f"({stats.cite_worthy} cite-worthy) from {stats.papers_kept} of {stats.papers} papers")


def test_unarxive_spans_only_baseline_keeps_more_and_dirtier(unarxive_papers, splitter):
    papers = unarxive_papers[:15]  # splitting every candidate is slow: a third of the sample will do
    ours, ours_stats = curate(papers, splitter)
    baseline, stats = curate(papers, splitter, mode="spans-only")
    assert stats.papers_rejected == ours_stats.papers_rejected
    assert stats.kept > ours_stats.kept
    texts = [s["text"] for r in baseline for s in r["samples"]]
    assert any("{{formula:" in t for t in texts)  # what the CiteWorth rules keep out


def test_s2orc_papers_under_the_papers_rules(s2orc_papers, splitter):
    """The S2ORC test papers have two MAG fields each or non-Appendix-A section titles, so the
    paper's own rules keep none of them; the reasons say why."""
    records, stats = curate(s2orc_papers, splitter)
    assert records == []
    assert stats.papers_rejected["ambiguous_field"] == 2


def test_s2orc_papers_keep_numeric_and_author_year_paragraphs(s2orc_papers, splitter):
    records, stats = curate(s2orc_papers, splitter, multi_field="first", sections=["*"])
    by_paper = Counter(r["paper_id"] for r in records)
    assert by_paper["18980463"] > 0 and by_paper["18980380"] > 0  # author-year and numeric
    cited = [t for r in records for s in r["samples"] for t in (s["citation_text"] or [])]
    assert any(t.startswith("(") for t in cited) and any(t.startswith("[") for t in cited)
    assert stats.papers_rejected["citation_style"] == 1  # 94551546 cites with superscripts
    print(f"\nS2ORC JSON papers (multi_field=first, all sections): {stats.kept} paragraphs, "
          f"{stats.sentences} sentences ({stats.cite_worthy} cite-worthy), {dict(by_paper)}")


def test_real_papers_curate_deterministically(unarxive_papers, s2orc_papers, splitter):
    papers = unarxive_papers[:20] + s2orc_papers
    first, _ = curate(papers, splitter, multi_field="first")
    again, _ = curate(papers, splitter, multi_field="first", batch_size=7)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
