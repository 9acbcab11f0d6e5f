"""The one construction of a Paper every reader uses: provenance from the shard, the normalised
metadata, identifiers from the parse and then the metadata row, the row's facts first."""

from citeworth.core.paper import BibEntry, Paragraph
from citeworth.sources.base import Shard
from citeworth.sources.facts import METADATA_KEYS, PaperFacts, new_paper

SHARD = Shard("tei", "part-1", ("a.tei.xml",), "2024-02")
PARSED = dict(paper_id="a", title="A parsed title", paragraphs=[Paragraph("Text.", "Intro")],
              bib_entries={"b0": BibEntry("b0")}, abstract="An abstract.", authors=("Ada Lovelace",),
              ids=[("DOI", "https://doi.org/10.1/ABC"), ("arXiv", None), ("idno", "x")],
              field_scheme="mag", has_ref_entries=True, venue_id="Parsed venue", year=2001)


def test_without_a_row_the_parse_decides_and_inbound_citations_are_unknown():
    paper = new_paper(SHARD, **PARSED, extra={"main_file": "a.tex"})
    assert (paper.source, paper.release, paper.shard) == ("tei", "2024-02", "part-1")
    assert paper.ids == {"doi": "10.1/abc"}  # normalised; unknown kinds and blank values left out
    assert (paper.title, paper.abstract) == ("A parsed title", "An abstract.")
    assert paper.authors == ("Ada Lovelace",)
    assert paper.metadata == {"field_scheme": "mag", "has_abstract": True, "has_body_text": True,
                              "has_bib_entries": True, "has_ref_entries": True, "has_inbound_citations": None,
                              "venue_id": "Parsed venue", "year": 2001, "subject": None, "collection": "tei",
                              "main_file": "a.tex"}
    assert tuple(paper.metadata)[:len(METADATA_KEYS)] == METADATA_KEYS


def test_a_metadata_row_comes_first_fills_missing_ids_and_vetoes_parse_facts():
    row = PaperFacts(title="The row's title", fields=("Biology",), year=2003, venue_id="Row venue",
                     has_inbound_citations=True, has_abstract=False, ids={"doi": "10.1/other", "s2": "7"},
                     authors=("Row Author",))
    paper = new_paper(SHARD, **PARSED, row=row)
    assert (paper.title, paper.fields_of_study) == ("The row's title", ("Biology",))
    assert paper.ids == {"doi": "10.1/abc", "s2": "7"}  # the parse's DOI stays, the row adds its S2 id
    assert paper.authors == ("Ada Lovelace",)  # the parse names authors: the row's are not needed
    facts = {"has_abstract": False, "has_inbound_citations": True, "venue_id": "Row venue", "year": 2003}
    assert {key: paper.metadata[key] for key in facts} == facts
    nameless = new_paper(SHARD, **{**PARSED, "authors": ()}, row=row)
    assert nameless.authors == ("Row Author",)
