"""The JATS reader on real articles of the two study sets -- eLife (JATS 1.1) and Europe PMC (NLM 2.3 to
JATS 1.2, many publishers) -- decompressed from the data mirror's ``.gz`` copies: each field rule of the
reader on an article it decides, the finer subject, the collection, Pensoft's taxon names, and a curation
of both sets with broken files beside them."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from citeworth.core.paper import Paper
from citeworth.curate import stage
from citeworth.sources import BadRecord, InputSpec, discover_shards, read_shard
from citeworth.text.fields import assign_field

ELIFE = "github/elifesciences/elife-articles"
EUROPEPMC = "github/0AlphaZero0/Text-Classification-Data-Citation-EuropePMC"
ELIFE_FILES = [f"elife{number:05d}" for number in (3, 5, 7, 11, 12, 13, 31, 36, 47, 48, 49, 324, 626)]
EUROPEPMC_FILES = [
    "Pipeline Dataset Creation/articlesOA/PMC2216687", "Pipeline Dataset Creation/articlesOA/PMC3744683",
    "Pipeline Dataset Creation/articlesOA/PMC3911802", "Scripts/articlesOA/PMC5050015",
    "MLAnalysis/Modelsaved/PipelineDatasetCreation/articlesOA/PMC6193054", "Scripts/articlesOA/PMC6408433",
]


@pytest.fixture(scope="module")
def raw(tmp_path_factory, mirror) -> Path:
    """The 19 articles as the download lands them (decompressed), one folder per set."""
    root = tmp_path_factory.mktemp("sets")
    stored = [(mirror / ELIFE / f"{name}.xml.gz", root / "elife" / f"{name}.xml") for name in ELIFE_FILES]
    stored += [(mirror / EUROPEPMC / f"{name}-fulltxt.xml.gz",
                root / "europepmc" / f"{Path(name).name}-fulltxt.xml") for name in EUROPEPMC_FILES]
    for source, target in stored:
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(gzip.decompress(source.read_bytes()))
    return root


def field(paper: Paper) -> str | None:
    return assign_field(paper.metadata["field_scheme"], paper.fields_of_study,
                        venue=paper.metadata["venue_id"]).field


@pytest.fixture(scope="module")
def papers(raw) -> dict[str, Paper]:
    read = [item for folder, collection in (("elife", "eLife"), ("europepmc", "Europe PMC"))
            for shard in discover_shards("jats", str(raw / folder / "*.xml"), collection=collection)
            for item in read_shard(shard)]
    assert not [item for item in read if isinstance(item, BadRecord)]
    return {paper.paper_id: paper for paper in read}


@pytest.mark.parametrize(("paper_id", "scheme", "expected", "subject"), [
    # eLife's headings: their fields agree, or the first of two is kept as the subject
    ("10.7554/eLife.00003", "elife", "Biology", "Immunology"),  # + Microbiology and infectious disease
    ("10.7554/eLife.00007", "elife", "Biology", "Genomics and evolutionary biology"),  # + Plant biology
    ("10.7554/eLife.00626", "elife", "Medicine", "Epidemiology and global health"),
    ("10.7554/eLife.00324", "elife", None, "Cell biology"),  # + Human biology and medicine: ambiguous
    ("PMC5050015", "elife", "Biology", "Biophysics and Structural Biology"),  # Europe PMC's copy, later names
    # Europe PMC: PLOS taxonomy, an article subject, the journal table, the references
    ("PMC2216687", "plos", "Biology", "Genomics"),
    ("PMC6193054", "pmc", "Biology", "Molecular biology"),  # MycoKeys (Pensoft)
    ("PMC3744683", "journal", "Biology", "Microbiology"),  # Genome Announcements
    ("PMC3911802", "journal", "Medicine", "Otolaryngology"),  # Allergy & Rhinology
    ("PMC6408433", "references", "Physics", None),  # Scientific Reports
])
def test_fields_and_subjects_of_real_articles(papers, paper_id, scheme, expected, subject):
    paper = papers[paper_id]
    got = (paper.metadata["field_scheme"], field(paper), paper.metadata["subject"])
    assert got == (scheme, expected, subject)
    assert paper.metadata["collection"] == ("eLife" if paper_id.startswith("10.7554") else "Europe PMC")


def test_every_article_of_the_slice_has_a_field_scheme_and_all_but_one_a_field(papers):
    assert len(papers) == 19
    assert [paper_id for paper_id, paper in papers.items() if field(paper) is None] == ["10.7554/eLife.00324"]


def test_pensoft_taxon_names_are_spaced_as_printed(papers):
    texts = [p.text for p in papers["PMC6193054"].paragraphs]
    assert any("D. durum" in text for text in texts)
    assert not any("D.durum" in text for text in texts)


def test_both_sets_curate_with_subject_and_collection_and_broken_files_are_quarantined(raw, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = shutil.copytree(raw, tmp_path / "raw")  # the module's articles, with broken files beside them
    real = (raw / "elife" / "elife00003.xml").read_bytes()
    (raw / "europepmc" / "zz-truncated.xml").write_bytes(real[: len(real) // 3])
    (raw / "europepmc" / "zz-foreign.xml").write_text('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text/></TEI>')
    (raw / "europepmc" / "zz-not-xml.xml").write_text("<article><p>Unclosed & broken</article>")
    inputs = [InputSpec("jats", str(raw / "elife" / "*.xml"), release="6c97171", collection="eLife"),
              InputSpec("jats", str(raw / "europepmc" / "*.xml"), release="oa-cc-v1",
                        collection="Europe PMC")]
    summary = stage.curate(stage.CurateParams(inputs=inputs, out_dir=tmp_path / "interim"))
    records = [json.loads(line) for path in sorted((tmp_path / "interim" / "paragraphs").glob("*.jsonl"))
               for line in path.read_text().splitlines()]
    assert {r["collection"] for r in records} == {"eLife", "Europe PMC"}
    subjects = {r["paper_id"]: r["subject"] for r in records}
    assert subjects["10.7554/eLife.00626"] == "Epidemiology and global health"
    assert all(r["source"] == "jats" and "subject" in r for r in records)
    quarantined = [json.loads(line) for path in (tmp_path / "interim" / "quarantine").glob("*.jsonl")
                   for line in path.read_text().splitlines()]
    assert sorted((q["location"], q["reason"]) for q in quarantined) == [
        ("file zz-foreign.xml", "unexpected_root"), ("file zz-not-xml.xml", "malformed_xml"),
        ("file zz-truncated.xml", "truncated_xml")]
    assert summary["quarantined"] == {"malformed_xml": 1, "truncated_xml": 1, "unexpected_root": 1}
    assert summary["curation"]["papers"] == 19 and summary["curation"]["papers_kept"] >= 10
