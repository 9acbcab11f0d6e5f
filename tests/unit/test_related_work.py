"""The related-work dataset: section finding, Kobayashi-format records, cited abstracts from the
corpus, and the stage end to end on a small TEI corpus the test writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeworth.core.paper import BibEntry, CitationSpan, Paper, Paragraph
from citeworth.corpora.related_work.lookup import LookupParams
from citeworth.corpora.related_work.record import anchor_surface, build_record, fill_abstracts, paper_record
from citeworth.corpora.related_work.sections import SectionFinder
from citeworth.corpora.related_work.stage import DATASET_FILE, RelatedWorkParams, related_work
from citeworth.sources import InputSpec, discover_shards
from citeworth.sources.latex.reader import read
from citeworth.text.sentences import SentenceSplitter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def para(text: str, section: str, number: str | None = None, headings: tuple[str, ...] = (),
         spans: tuple[tuple[str, str | None], ...] = ()) -> Paragraph:
    placed, cursor = [], 0
    for marker, ref_id in spans:
        start = text.index(marker, cursor)
        cursor = start + len(marker)
        placed.append(CitationSpan(start, cursor, marker, ref_id))
    return Paragraph(text=text, section=section, cite_spans=tuple(placed), sec_number=number,
                     headings=headings)


@pytest.mark.parametrize(("title", "rank"), [
    ("2. RELATED WORK:", 0), ("II. Related Works", 0), ("Further Related Work", 0), ("Related Studies", 1),
    ("Prior Work", 2), ("Literature Review", 3), ("Background", 6), ("Background and Related Work", 0),
    ("Context and related work", 0), ("Background Theory", None), ("Algebraic background", None),
    ("Comparison to State of the Art", None), ("Introduction", None), ("Related literature", 1),
])
def test_titles_match_whole_after_normalising(title, rank):
    assert SectionFinder().rank(title) == rank


def test_a_numbered_section_keeps_its_numbered_and_unnumbered_subsections_until_the_next_section():
    paragraphs = [para("Intro.", "Introduction", "1"), para("RW.", "Related Work", "2"),
                  para("Sub.", "Related Work", "2.1", ("Related Work", "Text generation")),
                  para("GROBID lost this subsection's number.", "Citation recommendation"),
                  para("Method.", "Method", "3")]
    section = SectionFinder().find(paragraphs)
    assert (section.title, section.number) == ("Related Work", "2")
    assert [p.text for p in section.paragraphs] == ["RW.", "Sub.", "GROBID lost this subsection's number."]


def test_an_unnumbered_section_ends_at_the_next_heading_and_related_work_beats_background():
    paragraphs = [para("B.", "Background"), para("R1.", "Related work"), para("R2.", "Related work"),
                  para("M.", "Methods")]
    section = SectionFinder().find(paragraphs)
    assert section.title == "Related work" and [p.text for p in section.paragraphs] == ["R1.", "R2."]


def test_a_related_work_subsection_is_found_through_the_heading_path():
    paragraphs = [para("I.", "Introduction", "1"),
                  para("R.", "Introduction", "1.2", ("Introduction", "Related works")),
                  para("N.", "Introduction", "1.3", ("Introduction", "Notation")),
                  para("Primer.", "Background", "2")]
    section = SectionFinder().find(paragraphs)
    assert section.title == "Related works" and [p.text for p in section.paragraphs] == ["R."]
    assert SectionFinder(["background"]).find(paragraphs).title == "Background"


@pytest.mark.parametrize(("text", "surface"), [
    ("[3,", "3"), ("4]", "4"), ("(Smith et al., 2010)", "(Smith et al., 2010)"),
    ("; Lee, 2011)", "Lee, 2011"), ("–[4]", "[4]"), ("{{cite:abc}}", "{{cite:abc}}"),
])
def test_anchor_surface_drops_what_the_marker_took_from_its_neighbours(text, surface):
    assert anchor_surface(text) == surface


@pytest.fixture(scope="module")
def splitter():
    return SentenceSplitter()


BIB = {f"b{i}": BibEntry(ref_id=f"b{i}", title=f"Paper {i}" if i != 2 else None, ids={"doi": f"10.1/{i}"})
       for i in range(5)}


def cited_paper(*paragraphs: Paragraph) -> Paper:
    return Paper(paper_id="p1", title="Citing", fields_of_study=(), paragraphs=list(paragraphs),
                 bib_entries=BIB, source="tei", release="r", ids={"arxiv": "2101.00001"},
                 authors=("Ada Lovelace", "Alan Turing"))


def test_a_record_in_kobayashis_format(splitter):
    text = ("Early work [1] set the task. Ranges [2]–[4] followed, as did an unknown one [9]. "
            "We differ from all of them.")
    paper = cited_paper(para("Intro.", "Introduction", "1"),
                        para(text, "Related Work", "2", spans=(("[1]", "b0"), ("[2]", "b1"), ("–[4]", "b3"),
                                                               ("[9]", None))))
    record = paper_record(paper, SectionFinder(), splitter.split)
    assert record["Sentences"] == [
        "Early work %cite{[1]}% set the task.",
        "Ranges %cite{[2]}%%cite{[3]}%%cite{[4]}% followed, as did an unknown one %cite{[5]}%.",
        "We differ from all of them."]
    assert record["CitationAnchorList"] == [["[1]"], ["[2]", "[3]", "[4]", "[9]"], []]
    assert record["CitedPaperIndexList"] == [["1"], ["2", "3", "4", "5"], []]
    assert record["CitedNumberList"] == [1, 4, 0] and record["AnswersCitationWorthiness"] == [1, 1, 0]
    assert record["CitedPaperTitle"] == {"1": "Paper 0", "2": "Paper 1", "4": "Paper 3"}  # b2 has no title
    assert (record["Title"], record["Author"], record["URL"]) == (
        "Citing", "Ada Lovelace, Alan Turing", "https://arxiv.org/abs/2101.00001")
    assert (record["paper_id"], record["source"], record["section_title"]) == ("p1", "tei", "Related Work")

    abstracts = {"10.1/0": ("Paper 0", "Abstract 0"), "10.1/2": ("Found title 2", "Abstract 2")}
    finished = fill_abstracts(record, lambda cited: abstracts.get(cited["ids"]["doi"]))
    assert finished["CitedPaperText"] == {"1": "Abstract 0", "3": "Abstract 2"}
    assert finished["CitedPaperTitle"]["3"] == "Found title 2"  # a found title fills a missing one only
    assert finished["CollectedCitedNumberList"] == [1, 1, 0]
    assert "_cited" not in finished and set(record) - set(finished) == {"_cited"}


def test_a_paper_without_a_related_work_section_has_no_record(splitter):
    assert paper_record(cited_paper(para("Intro [1].", "Introduction", spans=(("[1]", "b0"),))),
                        SectionFinder(), splitter.split) is None


def test_a_citation_glued_after_the_period_stays_with_its_sentence(splitter):
    text = "Prior systems failed.[1] Ours works (Smith, 2010; Lee, 2011)."
    paper = cited_paper(para(text, "Related Work", spans=(("[1]", "b0"), ("(Smith, 2010;", "b1"),
                                                          (" Lee, 2011)", "b4"))))
    section = SectionFinder().find(paper.paragraphs)
    record = build_record(paper, section, splitter.split)
    assert record["Sentences"] == ["Prior systems failed.%cite{[1]}%", "Ours works %cite{[2]}%%cite{[3]}%."]
    assert record["CitationAnchorList"][1] == ["Smith, 2010", "Lee, 2011"]


def test_a_springer_latex_paper_has_its_cited_titles_and_keeps_et_dot_al_in_one_sentence(splitter):
    """A Springer LNCS e-print (tests/fixtures/latex_splncs04): its splncs04 ``.bbl`` gave every cited
    paper an empty title, although the ``papers.bib`` beside it has them; and "Ye et. al. [2]" (an
    authors' typo) was cut into "... Ye et." | "al. [2]"."""
    [shard] = discover_shards("arxiv_latex", str(FIXTURES / "latex_splncs04"))
    [paper] = read(shard)
    record = paper_record(paper, SectionFinder(), splitter.split)
    assert record["CitedPaperTitle"] == {
        "1": "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        "2": "BP-Transformer: Modelling Long-Range Context via Binary Partitioning",
        "3": "S2ORC: The Semantic Scholar Open Research Corpus",
        "4": "CiteWorth: Cite-Worthiness Detection for Improved Scientific Document Understanding",
        "5": "Introduction to Information Retrieval"}  # not in papers.bib: the .bbl entry's own
    assert record["Sentences"][1:3] == [
        "Long documents need sparse attention, as shown by Guo and Ye et. al. %cite{[2]}%.",
        "Open corpora of papers exist %cite{[3]}%, and cite-worthiness has been studied on them %cite{[4]}%."]


TEI = """<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>{title}</title>
</titleStmt><sourceDesc><biblStruct><idno type="DOI">{doi}</idno></biblStruct></sourceDesc></fileDesc>
<profileDesc><abstract><p>{abstract}</p></abstract></profileDesc></teiHeader><text><body>{body}</body>
<back><listBibl>{bibl}</listBibl></back></text></TEI>"""
BIBL = ('<biblStruct xml:id="b{i}"><analytic><title level="a">{title}</title></analytic>{idno}'
        '<monogr><imprint><date when="2020"/></imprint></monogr></biblStruct>')


def write_corpus(folder) -> None:
    """Paper "citing" cites "by-doi" (matched by DOI) and "by-title" (by title) of the same corpus,
    and an outside paper; "broken" is not XML."""
    folder.mkdir()
    body = ('<div><head n="1">Introduction</head><p>We start.</p></div><div><head n="2">Related Work</head>'
            '<p>One line of work <ref type="bibr" target="#b0">[1]</ref> and another <ref type="bibr" '
            'target="#b1">[2]</ref> differ. Outside work <ref type="bibr" target="#b2">[3]</ref> too.'
            '</p></div>')
    bibl = "".join(BIBL.format(i=i, title=title, idno=idno) for i, (title, idno) in enumerate(
        [("Whatever the bibliography says", '<idno type="DOI">10.5/B</idno>'), ("Matched By Title.", ""),
         ("Not in the corpus", "")]))
    (folder / "citing.tei.xml").write_text(TEI.format(title="Citing", doi="10.5/a", abstract="A.", body=body,
                                                      bibl=bibl))
    (folder / "by-doi.tei.xml").write_text(TEI.format(title="B", doi="10.5/b", abstract="Abstract of B.",
                                                      body="<div><p>B.</p></div>", bibl=""))
    (folder / "by-title.tei.xml").write_text(TEI.format(title="matched by title", doi="10.5/c",
                                                        abstract="Abstract of C.",
                                                        body="<div><p>C.</p></div>", bibl=""))
    (folder / "broken.tei.xml").write_text("<TEI><unclosed>")


def test_the_stage_writes_sorted_records_with_corpus_abstracts_stats_and_quarantine(tmp_path):
    write_corpus(tmp_path / "tei")
    params = RelatedWorkParams(inputs=[InputSpec(reader="tei", glob=str(tmp_path / "tei" / "*.tei.xml"))],
                               out_dir=tmp_path / "data", stats_path=tmp_path / "reports" / "stats.json",
                               table_path=tmp_path / "reports" / "stats.md",
                               lookup=LookupParams(cache_dir=tmp_path / "cache"))
    summary = related_work(params)
    [record] = [json.loads(line) for line in (params.out_dir / DATASET_FILE).read_text().splitlines()]
    assert record["paper_id"] == "citing" and record["URL"] == "https://doi.org/10.5/a"
    assert record["CitedPaperText"] == {"1": "Abstract of B.", "2": "Abstract of C."}
    assert record["CollectedCitedNumberList"] == [2, 0]
    assert (summary["papers"], summary["papers_with_section"], summary["bad_records"]) == (3, 1, 1)
    assert (summary["anchors"], summary["anchors_mapped"], summary["cited_with_abstract"]) == (3, 3, 2)
    assert summary["abstracts_from_corpus"] == 2 and summary["share_sentences_with_citation"] == 1.0
    [bad] = [json.loads(line) for line in (tmp_path / "data" / "quarantine.jsonl").read_text().splitlines()]
    assert (bad["location"], bad["reason"]) == ("file broken.tei.xml", "truncated_xml")
    stats = json.loads(params.stats_path.read_text())
    assert stats["per_source"]["tei"]["papers"] == 3 and set(stats) == {"overall", "per_source", "lookup"}
    report = (tmp_path / "reports" / "stats.md").read_text()
    assert "| tei | 3 | 1 |" in report and "| Related Work | 1 |" in report
    assert not list((tmp_path / "data").glob(".related_work-*"))  # the work files are gone

    before = (params.out_dir / DATASET_FILE).read_bytes(), params.stats_path.read_bytes()
    related_work(params)
    assert ((params.out_dir / DATASET_FILE).read_bytes(), params.stats_path.read_bytes()) == before
