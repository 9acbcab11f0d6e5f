"""The Semantic Scholar datasets API ``s2orc`` reader on records the test writes from the public
schema: ``content.text`` plus ``content.annotations`` (JSON strings, parsed lists or null) with
paragraph / sectionheader (``attributes.n``) / bibref (``attributes.ref_id``) / bibentry
(``attributes.id``, ``attributes.matched_paper_id``) offsets; fields from the ``papers`` dataset."""

from __future__ import annotations

import copy
import gzip
import json
from collections import defaultdict

import pytest

from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.s2_api import corpus_ids


class Doc:
    """Builds a paper's text and its annotations with exact offsets."""

    def __init__(self):
        self.text = ""
        self.annotations = defaultdict(list)

    def add(self, kind, text, attributes=None):
        start = len(self.text)
        self.text += text
        if kind:
            item = {"start": start, "end": len(self.text)}
            if attributes:
                item["attributes"] = attributes
            self.annotations[kind].append(item)
        return start

    def paragraph(self, *parts):
        start = len(self.text)
        for part in parts:
            if isinstance(part, tuple):
                self.add(*part)
            else:
                self.add(None, part)
        self.annotations["paragraph"].append({"start": start, "end": len(self.text)})
        self.add(None, "\n")


def build_paper():
    doc = Doc()
    doc.add("title", "Cite-worthiness in practice")
    doc.add(None, "\n")
    doc.add("abstract", "We study which sentences need citations.")
    doc.add(None, "\n")
    doc.add("sectionheader", "Introduction", {"n": "1"})
    doc.add(None, "\n")
    doc.paragraph("Prior work studied this ", ("bibref", "[1]", {"ref_id": "b0"}), ". Others disagree ",
                  ("bibref", "(Smith et al., 2020)", {"ref_id": "b1"}), ".")
    doc.add("sectionheader", "Related Work", {"n": "2"})
    doc.add(None, "\n")
    doc.paragraph("As ", ("figureref", "Figure 1", {"ref_id": "fig_0"}), " shows, ", ("formula", "x = y"),
                  " holds.")
    doc.add("sectionheader", "Results")
    doc.add(None, "\n")
    doc.paragraph("It was confirmed ", ("bibref", "[2]", {"matched_paper_id": 222}), ".")
    doc.add("figure", "Figure 1: A plot from ")
    doc.add("bibref", "[1]", {"ref_id": "b0"})  # a citation in a caption, outside every paragraph
    doc.add(None, "\n")
    doc.add("bibentry", "[1] A. Author. An old paper. 1999.", {"id": "b0", "matched_paper_id": 111})
    doc.add(None, "\n")
    doc.add("bibentry", "[2] J. Smith et al. A new paper. 2020.", {"id": "b1", "matched_paper_id": 222})
    return doc


def s2orc_record(doc, corpus_key="corpusid", corpus_id=1001, as_strings=True):
    annotations = {kind: json.dumps(items) if as_strings else items
                   for kind, items in doc.annotations.items()}
    return {corpus_key: corpus_id,
            "externalids": {"arxiv": None, "mag": None, "acl": None, "pubmed": "31", "pubmedcentral": None,
                            "dblp": None, "doi": "10.1/x"},
            "content": {"source": {"pdfurls": None, "pdfsha": "ab", "oainfo": None},
                        "text": doc.text, "annotations": annotations}}


def second_record():
    """corpusId spelling, parsed lists, null annotations, no papers-dataset title."""
    record = s2orc_record(build_paper(), corpus_key="corpusId", corpus_id=1002, as_strings=False)
    annotations = record["content"]["annotations"]
    annotations.update(figure=None, formula=None, figureref=None)
    return record


PAPERS_ROWS = [
    {"corpusid": 1001, "title": "Cite-worthiness in practice", "year": 2021, "venue": "ACL 2021",
     "journal": {"name": "Proceedings of ACL", "pages": "1-9"}, "citationcount": 5,
     "externalids": {"ACL": "2021.acl-1", "CorpusId": "1001"},
     "authors": [{"authorId": "1", "name": "Ada Lovelace"}, {"authorId": "2", "name": "Charles  Babbage"}],
     "s2fieldsofstudy": [{"category": "Computer Science", "source": "external"},
                         {"category": "Linguistics", "source": "s2-fos-model"},
                         {"category": "Computer Science", "source": "s2-fos-model"}]},
    {"corpusid": 1002, "year": 2019, "venue": "", "journal": None, "citationcount": 0,
     "externalids": {"PubMed": "123"}, "s2fieldsofstudy": None, "fieldsofstudy": ["Medicine"]},
    {"corpusid": 9999, "title": "Not in the shard", "s2fieldsofstudy": []},
]


def write_gz(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))
    return path


def shard_of(tmp_path, records):
    data = write_gz(tmp_path / "s2_api" / "2023-11-14" / "s2orc" / "part-0.jsonl.gz", records)
    papers = write_gz(tmp_path / "s2_api" / "2023-11-14" / "papers" / "papers-0.jsonl.gz", PAPERS_ROWS)
    [shard] = discover_shards("s2_api", str(data.parent / "*.gz"), metadata=str(papers))
    return shard


@pytest.fixture
def papers(tmp_path):
    shard = shard_of(tmp_path, [s2orc_record(build_paper()), second_record()])
    items = list(read_shard(shard))
    assert not [item for item in items if isinstance(item, BadRecord)]
    return {paper.paper_id: paper for paper in items}


def test_discovery_takes_the_release_from_the_folder(tmp_path):
    shard = shard_of(tmp_path, [])
    assert (shard.reader, shard.name, shard.release) == ("s2_api", "2023-11-14_part-0", "2023-11-14")
    assert shard.metadata.endswith("papers-0.jsonl.gz")
    other = write_gz(tmp_path / "dump" / "part-1.jsonl.gz", [])
    with pytest.raises(ValueError, match="release"):
        discover_shards("s2_api", str(other))
    assert discover_shards("s2_api", str(other), release="2024-01-02")[0].release == "2024-01-02"


def test_paragraphs_sections_and_citations(papers):
    paper = papers["1001"]
    assert [(p.section, p.sec_number) for p in paper.paragraphs] == [
        ("Introduction", "1"), ("Related Work", "2"), ("Results", None)]
    first, second, third = paper.paragraphs
    assert first.text == "Prior work studied this [1]. Others disagree (Smith et al., 2020)."
    assert [(s.text, s.ref_id) for s in first.cite_spans] == [("[1]", "b0"), ("(Smith et al., 2020)", "b1")]
    assert all(p.text[s.start:s.end] == s.text for p in paper.paragraphs for s in p.cite_spans)
    assert [(second.text[a:b], kind) for a, b, kind in second.ref_spans] == [("Figure 1", "figure"),
                                                                             ("x = y", "formula")]
    assert [(s.text, s.ref_id) for s in third.cite_spans] == [("[2]", "b1")]  # via matched_paper_id
    assert paper.bib_entries["b0"].link == "111"
    assert paper.bib_entries["b1"].raw == "[2] J. Smith et al. A new paper. 2020."


def test_fields_and_metadata_from_the_papers_dataset(papers):
    paper = papers["1001"]
    assert paper.fields_of_study == ("Computer Science", "Linguistics")
    assert paper.title == "Cite-worthiness in practice"
    assert paper.metadata == {
        "field_scheme": "s2", "has_abstract": True, "has_body_text": True, "has_bib_entries": True,
        "has_ref_entries": True, "has_inbound_citations": True, "venue_id": "Proceedings of ACL",
        "year": 2021, "subject": None, "collection": "s2_api",
    }
    assert (paper.source, paper.release, paper.shard) == ("s2_api", "2023-11-14", "2023-11-14_part-0")


def test_ids_abstract_and_authors_from_the_record_and_its_papers_row(papers):
    paper = papers["1001"]
    # the record's externalids (nulls left out) and corpus id, then the kinds only its row states
    assert paper.ids == {"pmid": "31", "doi": "10.1/x", "s2": "1001", "acl": "2021.acl-1"}
    assert paper.abstract == "We study which sentences need citations."
    assert paper.authors == ("Ada Lovelace", "Charles Babbage")  # the papers row: the text has none
    assert papers["1002"].ids == {"pmid": "31", "doi": "10.1/x", "s2": "1002"}  # the record's PubMed id first


def test_key_variants_parsed_lists_and_null_annotations(papers):
    paper = papers["1002"]
    assert paper.fields_of_study == ("Medicine",)  # the older `fieldsofstudy` list
    assert paper.title == "Cite-worthiness in practice"  # no row title: the title annotation
    assert paper.metadata["has_inbound_citations"] is False
    assert paper.metadata["has_ref_entries"] is False  # figure: null
    assert paper.metadata["venue_id"] == "123"  # externalids.PubMed
    assert [len(p.ref_spans) for p in paper.paragraphs] == [0, 0, 0]


def test_without_papers_metadata_fields_are_unknown(tmp_path):
    data = write_gz(tmp_path / "2023-11-14" / "part-0.jsonl.gz", [s2orc_record(build_paper())])
    [shard] = discover_shards("s2_api", str(data))
    [paper] = read_shard(shard)
    assert paper.fields_of_study == () and paper.metadata["has_inbound_citations"] is None
    assert paper.metadata["venue_id"] == "31"  # the record's own externalids.pubmed


def test_a_formula_running_past_its_paragraph_is_cut_at_the_paragraph_end(tmp_path):
    record = s2orc_record(build_paper())
    [formula] = json.loads(record["content"]["annotations"]["formula"])
    formula["end"] += 10
    set_annotations(record, "formula", [formula])
    [paper] = read_shard(shard_of(tmp_path, [record]))
    second = paper.paragraphs[1]
    [(start, end, kind)] = [span for span in second.ref_spans if span[2] == "formula"]
    assert (second.text[start:], kind) == ("x = y holds.", "formula") and end == len(second.text)


def test_corpus_ids_are_read_off_the_raw_lines(tmp_path):
    doc = build_paper()
    doc.add(None, ' {"corpusid": 5} ')  # escaped inside the text: not a record's id
    path = write_gz(tmp_path / "x.jsonl.gz", [s2orc_record(doc), second_record()])
    assert corpus_ids((str(path),)) == {"1001", "1002"}


def set_annotations(record, kind, items):
    record["content"]["annotations"][kind] = json.dumps(items)
    return record


def crossing(record):
    items = json.loads(record["content"]["annotations"]["bibref"])
    items[1]["end"] += 5  # past the end of its paragraph
    return set_annotations(record, "bibref", items)


def overlapping(record):
    items = json.loads(record["content"]["annotations"]["bibref"])
    items.append({"start": items[0]["start"] + 1, "end": items[0]["end"] + 2})
    return set_annotations(record, "bibref", items)


def out_of_range(record):
    return set_annotations(record, "figureref", [{"start": 10, "end": len(record["content"]["text"]) + 1}])


def overlapping_paragraphs(record):
    items = json.loads(record["content"]["annotations"]["paragraph"])
    items.append({"start": items[0]["start"] + 3, "end": items[0]["end"] + 3})
    return set_annotations(record, "paragraph", items)


def malformed(record):
    record["content"]["annotations"]["bibentry"] = '[{"start": 3, "end"'
    return record


def no_content(record):
    record["content"] = None
    return record


def no_id(record):
    del record["corpusid"]
    return record


@pytest.mark.parametrize(("damage", "reason"), [
    (crossing, "span_out_of_range"),
    (overlapping, "overlapping_spans"),
    (out_of_range, "span_out_of_range"),
    (overlapping_paragraphs, "overlapping_spans"),
    (malformed, "malformed_json"),
    (no_content, "missing_key:content"),
    (no_id, "missing_key:corpusid"),
])
def test_bad_records_are_quarantined_and_reading_goes_on(tmp_path, damage, reason):
    good = s2orc_record(build_paper())
    shard = shard_of(tmp_path, [damage(copy.deepcopy(good)), second_record()])
    bad, paper = read_shard(shard)
    assert isinstance(bad, BadRecord)
    assert (bad.reason, bad.location, bad.shard) == (reason, "line 1", shard.name)
    assert bad.raw == json.dumps(damage(copy.deepcopy(good)))[:500]
    assert paper.paper_id == "1002"
