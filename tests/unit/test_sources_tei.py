"""The GROBID TEI reader on the 2 mirrored real TEI files, a metadata JSONL and small TEI documents
the tests write (numbered sections, malformed input)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from citeworth.core.paper import Paper
from citeworth.curate.config import CurationConfig
from citeworth.curate.engine import Curator
from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.facts import METADATA_KEYS
from citeworth.text import citations as cit

TEI_FILES = "github/kermitt2/grobid_client_python/resources/**/*.tei.xml"
FES = "0046d83a-edd6-4631-b57c-755cdcce8b7f"  # J NeuroEng Rehabil 2016, numeric citations
SFN = "0f318087-b211-4ace-8ac9-3d9372a73c1c"  # Chinese Medical Journal 2017, superscript-style numbers


def read_all(shards) -> list[Paper | BadRecord]:
    return [item for shard in shards for item in read_shard(shard)]


@pytest.fixture(scope="module")
def papers(mirror) -> dict[str, Paper]:
    items = read_all(discover_shards("tei", str(mirror / TEI_FILES)))
    assert not [item for item in items if isinstance(item, BadRecord)]
    return {paper.paper_id: paper for paper in items}


def test_one_shard_per_folder(mirror):
    shards = discover_shards("tei", str(mirror / TEI_FILES))
    assert [(s.name, s.release, len(s.paths)) for s in shards] == [("test_1", "unversioned", 1),
                                                                   ("test_pdf", "unversioned", 1)]


@pytest.mark.parametrize(("paper_id", "paragraphs", "spans", "bib", "venue", "year"), [
    (FES, 39, 57, 49, "Journal of NeuroEngineering and Rehabilitation", 2016),
    (SFN, 19, 44, 27, "Chinese Medical Journal", 2017),
])
def test_observed_counts_and_header_metadata(papers, paper_id, paragraphs, spans, bib, venue, year):
    paper = papers[paper_id]
    found = len(paper.paragraphs), sum(len(p.cite_spans) for p in paper.paragraphs), len(paper.bib_entries)
    assert found == (paragraphs, spans, bib)
    assert set(paper.metadata) == set(METADATA_KEYS)
    assert (paper.metadata["venue_id"], paper.metadata["year"]) == (venue, year)
    assert paper.fields_of_study == () and paper.metadata["has_inbound_citations"] is None
    assert all(paper.metadata[key] for key in ("has_abstract", "has_body_text", "has_bib_entries",
                                               "has_ref_entries"))


def test_spans_are_exact_and_targets_link_the_bibliography(papers):
    unlinked = []
    for paper in papers.values():
        for paragraph in paper.paragraphs:
            assert paragraph.text == " ".join(paragraph.text.split())
            for span in paragraph.cite_spans:
                assert paragraph.text[span.start:span.end] == span.text
                if span.ref_id not in paper.bib_entries:
                    unlinked.append(span.text)
    assert unlinked == ["[SIQ]"]  # GROBID took an acronym in brackets for a citation, without a target


def test_grobid_citation_pieces_merge_into_printed_markers(papers):
    fes = papers[FES]
    spans = [s.text for p in fes.paragraphs for s in p.cite_spans]
    assert spans[:4] == ["[1]", "[2]", "[3,", "4]"]
    gap = re.compile(CurationConfig().merge_gap)
    markers = [c.text for p in fes.paragraphs for c in cit.merge_citations(p.text, p.cite_spans, gap)]
    assert {cit.citation_format(m) for m in markers} == {"numeric"}
    assert "[10][11][12][13][14]" in markers  # GROBID's expansion of the range [10-14]
    refs = {(p.text[s:e], kind) for p in fes.paragraphs for s, e, kind in p.ref_spans}
    assert ("(Fig. 2)", "figure") in refs and {kind for _, kind in refs} == {"figure"}


def test_sections_are_div_heads(papers):
    sections = [p.section for p in papers[SFN].paragraphs]
    assert sections[0] == "" and sections[-3:] == ["dIscussIon"] * 3  # a headless first div: the introduction
    assert papers[FES].paragraphs[0].section == "Background"


def test_without_metadata_the_curation_rejects_for_no_field(papers):
    curator = Curator(CurationConfig())
    assert list(curator.curate(papers.values())) == []
    assert curator.stats.papers_rejected == {"no_fields_of_study": 2}


def test_metadata_jsonl_keyed_by_file_stem(mirror, tmp_path):
    rows = [{"file_stem": FES, "mag_field_of_study": ["Medicine"], "has_inbound_citations": True,
             "journal": "J NeuroEng Rehabil", "year": 2015},
            {"mag_field_of_study": ["Biology"]},  # no key: quarantined, reading goes on
            {"file_stem": "not-in-this-shard", "mag_field_of_study": ["Physics"]}]
    metadata = tmp_path / "tei_metadata.jsonl"
    metadata.write_text("".join(json.dumps(row) + "\n" for row in rows))
    items = read_all(discover_shards("tei", str(mirror / TEI_FILES), metadata=str(metadata)))
    bad = [item for item in items if isinstance(item, BadRecord)]
    # each shard (one per folder) reads the metadata file, so each reports the bad row
    assert sorted((b.shard, b.location, b.reason) for b in bad) == [
        (shard, "tei_metadata.jsonl line 2", "missing_key:file_stem") for shard in ("test_1", "test_pdf")]
    papers = {item.paper_id: item for item in items if isinstance(item, Paper)}
    fes, sfn = papers[FES], papers[SFN]
    assert fes.fields_of_study == ("Medicine",) and fes.metadata["has_inbound_citations"] is True
    assert (fes.metadata["venue_id"], fes.metadata["year"]) == ("J NeuroEng Rehabil", 2015)  # the row wins
    assert sfn.fields_of_study == () and sfn.metadata["venue_id"] == "Chinese Medical Journal"


TEI = """<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>T</title>
</titleStmt></fileDesc></teiHeader><text><body>{body}</body><back><div type="references"><listBibl>
<biblStruct xml:id="b0"><analytic><title level="a">Cited</title></analytic><monogr><imprint>
<date type="published" when="1999"/></imprint></monogr></biblStruct></listBibl></div></back></text></TEI>"""


def test_numbered_subsections_take_their_sections_title(tmp_path):
    body = ('<div><head n="2">Methods</head><p>Own.</p></div>'
            '<div><head n="2.1">Participants</head><p>Sub <ref type="bibr" target="#b0">[1]</ref>.</p>'
            '<formula xml:id="formula_0">x = 1</formula></div>'
            '<div><head n="3.">Results</head><p>R <formula xml:id="f1">y</formula> <lb/>next.</p></div>')
    (tmp_path / "x.tei.xml").write_text(TEI.format(body=body))
    [paper] = read_all(discover_shards("tei", str(tmp_path / "*.tei.xml")))
    assert [(p.section, p.sec_number, p.text) for p in paper.paragraphs] == [
        ("Methods", "2", "Own."), ("Methods", "2.1", "Sub [1]."), ("Results", "3", "R {{formula:f1}} next.")]
    assert paper.paragraphs[1].cite_spans[0].ref_id == "b0" and paper.bib_entries["b0"].year == 1999
    assert paper.paper_id == "x" and paper.metadata["has_ref_entries"] is False


def test_malformed_and_foreign_xml_is_quarantined(tmp_path, mirror):
    [real] = (mirror / "github/kermitt2/grobid_client_python/resources/test_out/test_1").glob("*.tei.xml")
    (tmp_path / "a.tei.xml").write_bytes(real.read_bytes()[:5000])
    (tmp_path / "b.tei.xml").write_text("<article><front/></article>")
    (tmp_path / "c.tei.xml").write_text('<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader/></TEI>')
    shutil.copy(real, tmp_path / "d.tei.xml")
    *bad, good = read_all(discover_shards("tei", str(tmp_path / "*.tei.xml")))
    assert [(b.location, b.reason) for b in bad] == [
        ("file a.tei.xml", "truncated_xml"), ("file b.tei.xml", "unexpected_root"),
        ("file c.tei.xml", "missing_key:body")]
    assert good.paper_id == "d" and len(good.paragraphs) == 19


def test_header_and_bibliography_give_ids_abstract_authors_and_surnames(papers):
    fes = papers[FES]
    assert fes.ids == {"doi": "10.1186/s12984-016-0129-6"}
    assert fes.authors[:2] == ("Cristiano De Marchis", "Thiago Santos Monteiro")
    assert fes.abstract.startswith("Background: Functional Electrical Stimulation (FES) is increasingly")
    first = fes.bib_entries["b0"]
    assert (first.authors, first.year) == (("Quandt", "Hummel"), 2014)
    assert first.ids == {"doi": "10.1186/2040-7378-6-9"}


RESOLVING = """<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>T</title>
</titleStmt><sourceDesc><biblStruct><analytic><author><persName><forename>Ada</forename>
<surname>Lovelace</surname></persName></author></analytic><idno type="arXiv">arXiv:2101.00001v2</idno>
<idno type="DOI">10.1/ABC</idno></biblStruct></sourceDesc></fileDesc><profileDesc><abstract><div><head>Aim
</head><p>First part.</p><p>Second part.</p></div></abstract></profileDesc></teiHeader><text><body><div>
<head n="2">Related Work</head><p>Split <ref type="bibr" target="#b2">[3,</ref><ref type="bibr"
target="#b3">4]</ref>, ranged <ref type="bibr" target="#b0">[1]</ref>-<ref type="bibr" target="#b3">[4]</ref>,
unlinked <ref type="bibr">[5]</ref> and <ref type="bibr">(Smith et al., 2010)</ref>.</p></div></body><back>
<div type="references"><listBibl>{entries}</listBibl></div></back></text></TEI>"""
ENTRY = ('<biblStruct xml:id="b{i}"><analytic><title level="a">Paper {i}</title><author><persName>'
         '<surname>{surname}</surname></persName></author></analytic><monogr><imprint>'
         '<date type="published" when="{year}"/></imprint></monogr>{idno}</biblStruct>')


def test_grobid_callouts_ranges_and_unlinked_refs_resolve_like_s2orc_doc2json(tmp_path):
    """Split callouts, a range over two refs, refs without a target (by number, by surname + year),
    the official client's .grobid.tei.xml name, and the header's ids, authors and abstract."""
    bib = "".join(ENTRY.format(i=i, surname="Smith" if i == 4 else f"Author{i}", year=2000 + 10 * (i == 4),
                               idno='<idno type="PMID">123</idno>' if i == 0 else "") for i in range(5))
    (tmp_path / "paper.grobid.tei.xml").write_text(RESOLVING.format(entries=bib))
    [paper] = read_all(discover_shards("tei", str(tmp_path / "*.tei.xml")))
    assert paper.paper_id == "paper"
    assert paper.ids == {"arxiv": "2101.00001", "doi": "10.1/abc"} and paper.authors == ("Ada Lovelace",)
    assert paper.abstract == "First part. Second part."
    assert paper.bib_entries["b0"].ids == {"pmid": "123"} and paper.bib_entries["b4"].authors == ("Smith",)
    [paragraph] = paper.paragraphs
    assert [(s.text, s.ref_ids) for s in paragraph.cite_spans] == [
        ("[3,", ("b2",)), ("4]", ("b3",)), ("[1]", ("b0",)), ("-[4]", ("b1", "b2", "b3")),
        ("[5]", ("b4",)), ("(Smith et al., 2010)", ("b4",))]
