"""The unarXive reader on the mirrored real sample (49 arXiv papers, Dec 2022) and small fixtures."""

from __future__ import annotations

import json
import tarfile
from collections import Counter

import pytest

from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.facts import METADATA_KEYS
from citeworth.sources.unarxive import PLACEHOLDER

SAMPLE = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory, mirror):
    target = tmp_path_factory.mktemp("unarxive")
    with tarfile.open(mirror / SAMPLE) as archive:
        archive.extractall(target, filter="data")
    return target / "unarXive_data_sample"


@pytest.fixture(scope="module")
def shard(sample_dir):
    [only] = discover_shards("unarxive", str(sample_dir / "*.jsonl"))
    return only


@pytest.fixture(scope="module")
def papers(shard):
    items = list(read_shard(shard))
    assert not [item for item in items if isinstance(item, BadRecord)]
    return {paper.paper_id: paper for paper in items}


def test_shard_is_one_file_with_the_default_release(shard):
    assert (shard.reader, shard.name, shard.release, shard.metadata) == (
        "unarxive", "arXiv_src_2212_086", "2023-sample", None)


def test_counts_observed_in_the_sample(papers):
    paragraphs = [p for paper in papers.values() for p in paper.paragraphs]
    refs = Counter(kind for p in paragraphs for *_, kind in p.ref_spans)
    assert len(papers) == 49
    assert len(paragraphs) == 5834  # content_type "paragraph" only (123 lists, 10 proofs left out)
    assert sum(len(p.cite_spans) for p in paragraphs) == 2928
    assert refs == {"formula": 17569, "figure": 276, "table": 66}


def test_citation_spans_are_the_cite_placeholders_and_resolve(papers):
    for paper in papers.values():
        for paragraph in paper.paragraphs:
            for span in paragraph.cite_spans:
                assert paragraph.text[span.start:span.end] == span.text
                match = PLACEHOLDER.fullmatch(span.text)
                assert match and match.group(1) == "cite" and match.group(2) == span.ref_id
                assert span.ref_id in paper.bib_entries
            for start, end, kind in paragraph.ref_spans:
                assert paragraph.text[start:end].startswith("{{" + kind + ":")


def test_no_placeholder_is_left_outside_the_spans(papers):
    for paper in papers.values():
        for paragraph in paper.paragraphs:
            spans = sorted([(s.start, s.end) for s in paragraph.cite_spans]
                           + [(start, end) for start, end, _ in paragraph.ref_spans])
            text, cursor = [], 0
            for start, end in spans:
                text.append(paragraph.text[cursor:start])
                cursor = end
            text.append(paragraph.text[cursor:])
            assert not PLACEHOLDER.search("".join(text))


def sections_of(paper):
    seen = []
    for paragraph in paper.paragraphs:
        if (paragraph.sec_number, paragraph.section) not in seen:
            seen.append((paragraph.sec_number, paragraph.section))
    return seen


def test_subsection_title_is_its_top_level_section(papers):
    # "1.1 Notation" is inside "1 Introduction"
    assert ("1.1", "Introduction") in sections_of(papers["2212.11867"])
    # an unnumbered subsection ("Related work", sec_number -1) inside section 1
    assert ("-1", "Introduction") in sections_of(papers["2212.11884"])
    # subsections numbered 1, 2, ... again inside "3 Overview"? No: the numbers jump 3 -> 5, so they
    # belong to section 4, whose title the data lacks; they keep their own titles.
    sections = sections_of(papers["2212.11770"])
    assert ("1", "SLAM and Scene Graphs") in sections and ("1", "Robot Odometry") in sections
    assert ("3", "Overview") in sections and ("5", "Back-End") in sections


def test_fields_and_normalized_metadata(papers, shard):
    paper = papers["2212.11867"]
    assert paper.fields_of_study == ("math.PR", "math.CA", "math.CV")  # primary category first
    assert paper.title.startswith("Zeros of a growing number of derivatives of random polynomials with "
                                  "independent roots")
    assert tuple(paper.metadata) == METADATA_KEYS
    assert paper.metadata == {
        "field_scheme": "arxiv", "has_abstract": True, "has_body_text": True, "has_bib_entries": True,
        "has_ref_entries": True, "has_inbound_citations": None, "venue_id": "2212.11867", "year": 2022,
        "subject": None, "collection": "unarxive",
    }
    assert (paper.source, paper.release, paper.shard) == ("unarxive", "2023-sample", shard.name)


def record(text, cite_spans=(), ref_spans=(), **extra):
    body = [{"section": "Introduction", "sec_number": "1", "sec_type": "section", "content_type": "paragraph",
             "text": text, "cite_spans": list(cite_spans), "ref_spans": list(ref_spans)}]
    return {"paper_id": "2301.00001", "metadata": {"title": "T", "categories": "cs.CL cs.LG"},
            "abstract": {"text": "An abstract."}, "body_text": body, "bib_entries": {"abc": {}},
            "ref_entries": {}, **extra}


def read_records(tmp_path, *records):
    path = tmp_path / "arXiv_src_2301_001.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    [only] = discover_shards("unarxive", str(path))
    return list(read_shard(only))


def test_placeholders_without_spans_become_spans(tmp_path):
    text = "As shown in {{cite:abc}}, the bound {{formula:f1}} holds."
    [paper] = read_records(tmp_path, record(text))
    [paragraph] = paper.paragraphs
    assert [(s.text, s.ref_id) for s in paragraph.cite_spans] == [("{{cite:abc}}", "abc")]
    assert [(text[a:b], kind) for a, b, kind in paragraph.ref_spans] == [("{{formula:f1}}", "formula")]


def test_shifted_span_is_moved_onto_its_text_and_a_missing_one_is_quarantined(tmp_path):
    text = "As shown in {{cite:abc}}, it holds."
    shifted = {"start": 9, "end": 21, "text": "{{cite:abc}}", "ref_id": "abc"}
    absent = {"start": 0, "end": 12, "text": "{{cite:zzz}}", "ref_id": "zzz"}
    paper, bad = read_records(tmp_path, record(text, [shifted]), record(text, [absent]))
    [span] = paper.paragraphs[0].cite_spans
    assert (span.start, span.end, span.text) == (12, 24, "{{cite:abc}}")
    assert isinstance(bad, BadRecord) and bad.reason == "span_text_mismatch" and bad.location == "line 2"
