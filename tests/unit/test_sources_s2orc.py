"""The S2ORC single-paper JSON reader on the mirrored real papers of three releases."""

from __future__ import annotations

import pytest

from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.facts import METADATA_KEYS, first_present

PAPERS = "github/allenai/s2orc-doc2json/tests/s2orc/*/*.json"
METADATA = "github/allenai/s2orc/data/metadata/sample.jsonl"


@pytest.fixture(scope="module")
def shards(mirror):
    return {shard.name: shard for shard in discover_shards("s2orc_json", str(mirror / PAPERS),
                                                          metadata=str(mirror / METADATA))}


def read(shard):
    items = list(read_shard(shard))
    assert not [item for item in items if isinstance(item, BadRecord)]
    return {paper.paper_id: paper for paper in items}


@pytest.fixture(scope="module")
def papers(shards):
    return {pid: paper for shard in shards.values() for pid, paper in read(shard).items()}


def test_one_shard_per_release_folder(shards, mirror):
    assert sorted(shards) == ["20190928", "20200705", "20210101"]
    for name, shard in shards.items():
        assert shard.release == name and shard.metadata == str(mirror / METADATA)
        assert all(f"/{name}/" in path for path in shard.paths)


@pytest.mark.parametrize(("release", "papers_", "paragraphs", "cites"), [
    ("20190928", 3, 49, 147),   # grobid_parse nested under the paper
    ("20200705", 3, 124, 186),  # flat pdf parse
    ("20210101", 2, 66, 132),   # flat, with a small metadata block
])
def test_counts_per_release(shards, release, papers_, paragraphs, cites):
    found = read(shards[release]).values()
    assert len(found) == papers_
    assert sum(len(p.paragraphs) for p in found) == paragraphs
    assert sum(len(q.cite_spans) for p in found for q in p.paragraphs) == cites


def test_span_text_is_the_paragraph_slice_and_links_the_bibliography(papers):
    linked = total = 0
    for paper in papers.values():
        for paragraph in paper.paragraphs:
            for span in paragraph.cite_spans:
                assert paragraph.text[span.start:span.end] == span.text
                total += 1
                linked += span.ref_id in paper.bib_entries
    assert linked / total > 0.9


def test_real_citation_markers(papers):
    def markers(pid):
        return {span.text for p in papers[pid].paragraphs for span in p.cite_spans}
    assert "(Wernet and Desplan 2004;" in markers("18980463")  # author-year
    assert "15," in markers("94551546")  # numeric superscripts
    assert "(11," in markers("24e6b80e338a4e543de6b49cada07156c9149d22")


def test_section_titles_are_kept_as_the_source_gives_them(papers):
    assert {p.section for p in papers["10002293"].paragraphs} == {""}  # GROBID 2019: section null
    sections = [p.section for p in papers["18980380"].paragraphs]
    assert "II. PRELIMINARIES" in sections and "V. CONCLUSION" in sections


def test_metadata_sample_supplies_mag_fields_for_the_three_papers_it_has(papers):
    assert papers["18980380"].fields_of_study == ("Mathematics", "Computer Science")
    assert papers["18980463"].fields_of_study == ("Biology", "Medicine")
    assert papers["94551546"].fields_of_study == ("Materials Science",)
    assert papers["18980463"].metadata == {
        "field_scheme": "mag", "has_abstract": True, "has_body_text": True, "has_bib_entries": True,
        "has_ref_entries": True, "has_inbound_citations": True, "venue_id": "Genes & development",
        "year": 2007, "subject": None, "collection": "s2orc_json",
    }
    assert papers["18980463"].title.startswith("Adult and larval photoreceptors")


def test_ids_and_authors_come_from_the_file_then_the_metadata_row(papers):
    row_only = papers["18980463"]  # 20200705: the flat parse names neither; the metadata row both
    assert row_only.ids == {"s2": "18980463", "doi": "10.1101/gad.1565407", "pmid": "17785526",
                            "pmcid": "PMC1950857", "mag": "2111121145"}
    assert row_only.authors == ("S. G. Sprecher", "F. Pichaud", "C. Desplan")
    assert papers["18980380"].ids["mag"] == "2952813233"  # the first of the row's merged MAG ids
    in_file = papers["10002293"]  # 20190928: the file's own metadata block
    assert in_file.ids == {"doi": "10.3389/fmicb.2017.00498", "pmid": "28424663", "pmcid": "PMC5371592",
                           "s2": "10002293"}
    assert in_file.authors[0] == "Patrícia Diogo"


def test_papers_outside_the_metadata_keep_what_their_file_says(papers):
    paper = papers["10042064"]  # 20190928: venue and year in the file, no MAG fields anywhere
    assert paper.fields_of_study == ()
    assert paper.metadata["has_inbound_citations"] is None
    assert (paper.metadata["venue_id"], paper.metadata["year"]) == ("The Economic Journal", 2000)
    assert papers["f2235cd28c171f9f3b6a8bcebe246159c464980c"].metadata["has_abstract"] is False
    for paper in papers.values():
        assert tuple(paper.metadata) == METADATA_KEYS
        assert (paper.source, paper.release) == ("s2orc_json", paper.shard)


def test_without_metadata_the_fields_are_unknown(mirror):
    [shard] = discover_shards("s2orc_json", str(mirror / PAPERS.replace("*/", "20200705/")))
    paper = read(shard)["18980380"]
    assert paper.fields_of_study == () and paper.metadata["has_inbound_citations"] is None
    assert paper.title is None  # the 20200705 parse carries no title


def test_reference_spans_get_their_kind(papers):
    kinds = {kind for p in papers["10045593"].paragraphs for *_, kind in p.ref_spans}
    assert kinds == {"figure", "table"}  # incl. unresolved "(Figure 3" spans named by their text


@pytest.mark.parametrize("block", [
    {"text": "Plain.", "cite_spans": [], "ref_spans": [], "eq_spans": [], "section": "Intro", "sec_num": "1"},
    {"text": "Plain.", "cite_spans": None, "section": None, "sec_num": 2},
    {"text": "Plain.", "cite_spans": [], "ref_spans": "", "sec_num": "  "},
    {"text": "", "cite_spans": [], "section": ["not", "a", "string"]},
])
def test_a_paragraph_without_spans_is_the_one_the_span_checks_build(block):
    """The reader skips the span checks for a block without spans; it builds the same Paragraph."""
    from citeworth.sources.s2orc import _paragraph, _section
    from citeworth.sources.spans import make_paragraph

    checked = make_paragraph(block["text"], _section(block), [], "where",
                             sec_number=first_present(block.get("sec_num")))
    assert _paragraph(block, {}, "p1", 0) == checked


@pytest.mark.parametrize(("block", "reason"), [
    ("a string", "bad_type:body_text"),
    ({"cite_spans": []}, "missing_key:text"),
    ({"text": "x"}, "missing_key:cite_spans"),
    ({"text": 3, "cite_spans": []}, "bad_type:text"),
    ({"text": "x", "cite_spans": [], "ref_spans": {"start": 0}}, "bad_type:ref_spans"),
])
def test_a_block_the_fast_path_cannot_take_is_still_checked(block, reason):
    from citeworth.sources.base import RecordError
    from citeworth.sources.s2orc import _paragraph

    with pytest.raises(RecordError) as error:
        _paragraph(block, {}, "p1", 3)
    assert error.value.reason == reason and "p1 body_text[3]" in error.value.detail
