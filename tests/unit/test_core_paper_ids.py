"""Identifiers on Paper / BibEntry are normalised to one spelling so entries match papers."""

import pytest

from citeworth.core.paper import BibEntry, Paper, normalise_id


@pytest.mark.parametrize(
    ("kind", "raw", "expected"),
    [
        ("doi", "https://doi.org/10.1038/S41592-019-0686-2", "10.1038/s41592-019-0686-2"),
        ("doi", "doi: 10.7717/PEERJ-CS.103", "10.7717/peerj-cs.103"),
        ("arxiv", "arXiv:1907.10121v2", "1907.10121"),
        ("arxiv", "hep-th/9901001", "hep-th/9901001"),
        ("pmcid", "12345", "PMC12345"),
        ("pmcid", "pmc12345", "PMC12345"),
        ("pmid", " 31932807 ", "31932807"),
        ("mag", "2952813233,1849856029", "2952813233"),
        ("acl", "P19-1001", "P19-1001"),
    ],
)
def test_normalise_id(kind, raw, expected):
    assert normalise_id(kind, raw) == expected


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown identifier kind 'isbn'"):
        normalise_id("isbn", "0-306-40615-2")


def test_ids_default_to_empty_and_are_not_shared():
    first, second = BibEntry(ref_id="b1"), BibEntry(ref_id="b2")
    first.ids["doi"] = "10.1/x"
    assert second.ids == {} and second.authors == ()
    paper = Paper(paper_id="p", title=None, fields_of_study=(), paragraphs=[])
    assert paper.ids == {} and paper.abstract is None
