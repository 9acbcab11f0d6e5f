"""Input written to break a reader, as an attacker would: each one becomes a BadRecord with its
reason (or, where the input is valid, a Paper), and the shard reads on. Fixtures are small files
the tests write; the JSON line is a real unarXive record's shape."""

from __future__ import annotations

import gzip
import json

import pytest

from citeworth.core.paper import Paper
from citeworth.curate.config import CurationConfig
from citeworth.curate.engine import Curator
from citeworth.sources import BadRecord, discover_shards, read_shard

DEPTH = 3_000  # well past Python's recursion limit (1,000)


def unarxive_line(paper_id: str, **changes) -> bytes:
    text = "Prior work exists {{cite:b1}}."
    block = {"section": "Introduction", "sec_number": "1", "sec_type": "section", "content_type": "paragraph",
             "text": text, "cite_spans": [{"start": 18, "end": 29, "text": "{{cite:b1}}", "ref_id": "b1"}],
             "ref_spans": []}
    record = {"paper_id": paper_id, "metadata": {"categories": "cs.CL"}, "body_text": [block],
              "bib_entries": {"b1": {}}, "ref_entries": {}, **changes}
    return json.dumps(record).encode() + b"\n"


def read_unarxive(tmp_path, *lines: bytes, name="shard.jsonl"):
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    [shard] = discover_shards("unarxive", str(path))
    return list(read_shard(shard))


@pytest.mark.parametrize(("bad_line", "reason"), [
    (b"[" * 200_000 + b"\n", "too_deeply_nested"),  # RecursionError in json.loads
    (b'{"paper_id": "x", "body_text": ' + b'{"a": ' * 5_000 + b"\n", "too_deeply_nested"),
    (unarxive_line("2301.2", title="\ud800"), "invalid_unicode"),  # escaped as \ud800: no UTF-8 file holds it
    # input no rule foresaw (categories must be a string): the reader's own exception is the reason
    (unarxive_line("2301.2", metadata={"categories": ["cs.CL"]}), "unreadable:AttributeError"),
])
def test_a_json_line_that_breaks_the_reader_is_quarantined_and_reading_goes_on(tmp_path, bad_line, reason):
    first, bad, last = read_unarxive(tmp_path, unarxive_line("2301.1"), bad_line, unarxive_line("2301.3"))
    assert (first.paper_id, last.paper_id) == ("2301.1", "2301.3")
    assert isinstance(bad, BadRecord) and (bad.reason, bad.location) == (reason, "line 2")


def test_an_empty_gz_file_is_reported_not_read_as_an_empty_shard(tmp_path):
    (tmp_path / "empty.jsonl.gz").write_bytes(b"")
    [bad] = read_unarxive(tmp_path, name="empty.jsonl.gz")
    assert (bad.reason, bad.location) == ("truncated_gzip", "byte 0") and bad.fatal
    assert "0 bytes on disk" in bad.detail and "empty file" in bad.detail


def test_an_empty_plain_file_is_an_empty_shard(tmp_path):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert read_unarxive(tmp_path, name="empty.jsonl") == []


def test_a_legacy_metadata_row_that_breaks_the_facts_is_quarantined(tmp_path):
    parse = {"paper_id": "1", "abstract": [], "body_text": [{"text": "A text.", "cite_spans": [],
                                                             "section": "Intro"}]}
    rows = [{"paper_id": "1", "mag_field_of_study": 5, "has_pdf_parse": True}]  # a number, not a list
    (tmp_path / "pdf_parses_0.jsonl.gz").write_bytes(gzip.compress(json.dumps(parse).encode() + b"\n"))
    (tmp_path / "metadata_0.jsonl.gz").write_bytes(gzip.compress(json.dumps(rows[0]).encode() + b"\n"))
    [shard] = discover_shards("s2orc_legacy", str(tmp_path / "*.jsonl.gz"))
    row, parse_without_row = read_shard(shard)
    assert (row.reason, row.location) == ("unreadable:TypeError", "metadata_0.jsonl.gz line 1")
    assert (parse_without_row.reason, parse_without_row.location) == ("missing_metadata", "line 1")


JATS = """<article><front><article-meta><title-group><article-title>T</article-title></title-group>
<article-meta/></article-meta></front><body>{body}</body></article>"""
TEI = """<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>T</title>
</titleStmt></fileDesc></teiHeader><text><body>{body}</body></text></TEI>"""


def read_xml(tmp_path, reader: str, name: str, document: str):
    folder = tmp_path / reader
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(document)
    [shard] = discover_shards(reader, str(folder / name))
    return list(read_shard(shard))


def test_jats_inline_markup_nested_thousands_deep_is_read(tmp_path):
    inline = "<italic>" * DEPTH + "deep" + "</italic>" * DEPTH
    cite = "<xref ref-type='bibr' rid='r1'>[1]</xref>"
    body = f"<sec><title>Introduction</title><p>Prior work {cite} is {inline}.</p></sec>"
    [paper] = read_xml(tmp_path, "jats", "deep.nxml", JATS.format(body=body))
    assert isinstance(paper, Paper)
    [paragraph] = paper.paragraphs
    assert paragraph.text == "Prior work [1] is deep." and paragraph.cite_spans[0].text == "[1]"


def test_jats_sections_nested_thousands_deep_are_read(tmp_path):
    body = "<sec><title>Methods</title>" * DEPTH + "<p>Inside.</p>" + "</sec>" * DEPTH
    [paper] = read_xml(tmp_path, "jats", "deep.nxml", JATS.format(body=body))
    assert [(p.text, p.section) for p in paper.paragraphs] == [("Inside.", "Methods")]


def test_tei_divs_and_inline_markup_nested_thousands_deep_are_read(tmp_path):
    inline = "<hi>" * DEPTH + "deep" + "</hi>" * DEPTH
    body = "<div><head>Results</head>" * DEPTH + f"<p>It is {inline}.</p>" + "</div>" * DEPTH
    [paper] = read_xml(tmp_path, "tei", "deep.tei.xml", TEI.format(body=body))
    assert [(p.text, p.section) for p in paper.paragraphs] == [("It is deep.", "Results")]


def entity_bomb(megabytes: int = 4) -> str:
    """A JATS article of under 2 KB whose internal entities expand to ``megabytes`` MB of text."""
    sentence = "Lorem ipsum dolor sit amet. " * 36  # ~1 KB
    copies = megabytes * 1024 // 100
    doctype = (f'<!DOCTYPE article [<!ENTITY a "{sentence}"><!ENTITY b "{"&a;" * 100}">'
               f'<!ENTITY c "{"&b;" * copies}">]>')
    cite = "<xref ref-type='bibr' rid='r1'>[1]</xref>"
    body = f"<sec><title>Introduction</title><p>Prior work {cite}. &c;</p></sec>"
    return doctype + JATS.format(body=body)


def test_an_entity_expansion_becomes_a_paragraph_the_curation_rejects_before_splitting(tmp_path):
    document = entity_bomb()
    assert len(document.encode()) < 2_000
    [paper] = read_xml(tmp_path, "jats", "bomb.nxml", document)
    [paragraph] = paper.paragraphs
    assert len(paragraph.text) > 4_000_000  # over spaCy's 1,000,000-character limit (E088)
    paper.fields_of_study, paper.metadata["has_inbound_citations"] = ("Medicine",), True
    paper.metadata.update(has_abstract=True, has_bib_entries=True, has_ref_entries=True, venue_id="J",
                          field_scheme="pmc")
    curator = Curator(CurationConfig(sections=["*"], min_paper_citation_spans=1))
    assert list(curator.curate([paper])) == []
    assert curator.stats.paragraphs_rejected == {"paragraph_too_long": 1}
    assert curator._splitter is None  # rejected before anything was split
