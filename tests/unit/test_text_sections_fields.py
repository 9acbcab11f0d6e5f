"""Permissible sections (Appendix A) with title normalisation, and the mapping of MAG fields,
S2 fields of study and arXiv categories to exactly one CiteWorth field."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeworth.text.fields import (
    CITEWORTH_FIELDS,
    arxiv_field,
    assign_field,
    plos_path_field,
    plos_terms_listed,
)
from citeworth.text.sections import SectionFilter, appendix_a_titles, normalize_title

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_appendix_a_ships_with_the_package():
    titles = appendix_a_titles()
    assert len(titles) == 36
    assert titles[0] == "introduction" and "implementation details" in titles


@pytest.mark.parametrize(("title", "normal"), [
    ("II. PRELIMINARIES", "preliminaries"),  # S2ORC 18980380
    ("IV. SIMULATION", "simulation"),
    ("RESULTS AND DISCUSSION", "results and discussion"),  # S2ORC 94551546
    ("3.1 Related  Work:", "related work"),
    ("2. Methods", "methods"),
    ("A. Background", "background"),
    ("(b) Experiments", "experiments"),
    ("Results & Discussion", "results and discussion"),
    ("Discussion", "discussion"),  # a leading "d" is not a roman numeral here
    ("Analysis", "analysis"),
    ("", ""),
    (None, ""),
])
def test_titles_are_normalised(title, normal):
    assert normalize_title(title) == normal


def test_section_filter_uses_appendix_a_by_default():
    sections = SectionFilter()
    assert sections.permits("1 INTRODUCTION")
    assert sections.permits("Conclusions and Future Work.")
    assert not sections.permits("Materials and methods")  # Appendix A has "material and methods"
    assert not sections.permits("II. PRELIMINARIES")
    assert not sections.permits("")


def test_section_filter_takes_titles_and_patterns():
    sections = SectionFilter(["Materials and Methods", "*discussion*"])
    assert sections.permits("2. MATERIALS AND METHODS")
    assert sections.permits("4 General discussion and outlook")
    assert not sections.permits("Introduction")
    assert SectionFilter(["*"]).permits("Promoting and repressing the Rh6 subtype")


@pytest.mark.parametrize(("category", "field"), [
    ("cs.CL", "Computer Science"), ("math.PR", "Mathematics"), ("stat.ML", "Mathematics"),
    ("hep-ph", "Physics"), ("astro-ph.EP", "Physics"), ("cond-mat.mes-hall", "Physics"),
    ("gr-qc", "Physics"), ("nucl-th", "Physics"), ("quant-ph", "Physics"), ("nlin.SI", "Physics"),
    ("math-ph", "Physics"), ("physics.flu-dyn", "Physics"), ("physics.chem-ph", "Chemistry"),
    ("cond-mat.mtrl-sci", "Materials Science"), ("q-bio.BM", "Biology"), ("eess.SP", "Engineering"),
    ("econ.EM", "Economics"), ("q-fin.GN", "Economics"), ("hep-lat", "Physics"),
])
def test_arxiv_categories(category, field):
    assert arxiv_field(category) == field
    assert field in CITEWORTH_FIELDS


def test_arxiv_primary_category_decides():
    # unarXive 2212 sample: "q-fin.GN cs.IR cs.LG" and "physics.chem-ph cs.AI cs.LG q-bio.BM"
    assert assign_field("arxiv", ("q-fin.GN", "cs.IR", "cs.LG")).field == "Economics"
    assert assign_field("arxiv", ("physics.chem-ph", "cs.AI", "cs.LG", "q-bio.BM")).field == "Chemistry"
    assert assign_field("arxiv", ("unknown-archive.XX", "cs.LG")).reason == "no_citeworth_field"


def test_mag_and_s2_fields():
    assert assign_field("mag", ("Materials Science",)).field == "Materials Science"
    assert assign_field("s2", ("computer science",)).field == "Computer Science"
    assert assign_field("mag", ("Political Science",)).reason == "no_citeworth_field"
    # Sociology maps to none, so the paper is unambiguous.
    assert assign_field("s2", ("Sociology", "Psychology")).field == "Psychology"
    assert assign_field("mag", ("Medicine", "Medicine")).field == "Medicine"
    assert assign_field("pmc", ("Biology",)).field == "Biology"  # JATS: fields the reader mapped


def test_several_fields_are_ambiguous_unless_the_first_is_taken():
    # S2ORC 18980463 and 18980380 (20200705 metadata sample)
    assert assign_field("mag", ("Biology", "Medicine")).reason == "ambiguous_field"
    assert assign_field("mag", ("Mathematics", "Computer Science"), "first").field == "Mathematics"


def test_missing_fields_and_schemes():
    assert assign_field("mag", ()).reason == "no_fields_of_study"
    assert assign_field(None, ("Biology",)).reason == "unknown_field_scheme"


@pytest.mark.parametrize(("path", "field"), [
    ("Biology and life sciences/Neuroscience/Brain mapping", "Biology"),
    ("biology and life sciences/psychology/Behavior", "Psychology"),  # the longest listed prefix wins
    ("Physical sciences/Chemistry/Chemical compounds", "Chemistry"),
    ("Physical sciences/Astronomical sciences", "Physics"),
    ("Social sciences/Economics", "Economics"),
    ("Social sciences/Linguistics", None),
    ("Research and analysis methods/Imaging techniques", None),  # no discipline: no vote
    ("Veterinary science/Veterinary diseases", "Medicine"),
    ("Mathematics/Statistics", "Mathematics"),  # a v1 term with a sub-area
    ("Medicine/Mental health/Psychology/Cognitive psychology", "Psychology"),  # v2 repeats psychology
    ("Medicine/Mental health/Psychiatry/Schizophrenia", "Medicine"),
    ("Something unheard of", None),
])
def test_plos_paths_take_the_field_of_their_longest_listed_prefix(path, field):
    assert plos_path_field(path) == field


def test_plos_primary_field_is_the_most_voted_then_the_journal_s():
    medicine_twice = ["Medicine and health sciences/Oncology", "Medicine and health sciences/Surgery",
                      "Biology and life sciences/Genetics", "Research and analysis methods/Assays"]
    assert assign_field("plos", medicine_twice, venue="PLOS ONE").field == "Medicine"
    tie = ["Biology and life sciences/Genetics", "Medicine and health sciences/Oncology"]
    assert assign_field("plos", tie, venue="PLoS Medicine").field == "Medicine"  # the journal breaks it
    assert assign_field("plos", tie, venue="PLOS ONE").reason == "ambiguous_field"
    assert assign_field("plos", tie, "first", venue="PLOS ONE").field == "Biology"
    assert assign_field("plos", [], venue="PLOS Computational Biology").field == "Biology"  # no terms
    assert assign_field("plos", [], venue="PLOS ONE").reason == "no_fields_of_study"
    assert assign_field("plos", ["Science policy"], venue="PLOS ONE").reason == "no_citeworth_field"


def test_a_psychology_article_indexed_under_mental_health_too_is_psychology():
    """tests/fixtures/plos/psychology.xml: PLOS's taxonomy v2 lists each of its psychology terms under
    Medicine/Mental health/Psychology and under Social and behavioral sciences/Psychology. They voted
    Medicine 5 / Psychology 5, a tie PLOS ONE does not break: the article was rejected."""
    from citeworth.sources import discover_shards, read_shard

    [paper] = read_shard(discover_shards("jats", str(FIXTURES / "plos" / "psychology.xml"))[0])
    assert paper.metadata["field_scheme"] == "plos" and len(paper.fields_of_study) == 10
    assert sum(path.startswith("Medicine/Mental health/Psychology/") for path in paper.fields_of_study) == 5
    assert {plos_path_field(path) for path in paper.fields_of_study} == {"Psychology"}
    assert assign_field("plos", paper.fields_of_study, venue=paper.metadata["venue_id"]).field == "Psychology"


def test_the_plos_table_lists_every_taxonomy_term_of_the_mirrored_starter_corpus(mirror):
    from citeworth.sources import discover_shards, read_shard

    [shard] = discover_shards("jats", str(mirror / "github/PLOS/allofplos/allofplos/starter_corpus/*.xml"))
    unlisted = {path.split("/")[0] for paper in read_shard(shard) if paper.metadata["field_scheme"] == "plos"
                for path in paper.fields_of_study if not plos_terms_listed(path)}
    assert unlisted == set()


ELIFE_HEADINGS_2012_2016 = {  # the 14 headings of the mirrored eLife set
    "Medicine": ["Epidemiology and global health", "Human biology and medicine"],
    "Biology": ["Biochemistry", "Biophysics and structural biology", "Cell biology",
                "Computational and systems biology", "Developmental biology and stem cells", "Ecology",
                "Genes and chromosomes",
                "Genomics and evolutionary biology", "Immunology", "Microbiology and infectious disease",
                "Neuroscience", "Plant biology"],
}


def test_every_elife_heading_of_the_set_names_one_field():
    for field, headings in ELIFE_HEADINGS_2012_2016.items():
        for heading in headings:
            assert assign_field("elife", [heading.upper()]).field == field  # compared without case
    assert assign_field("elife", ["Neuroscience", "Cell biology"]).field == "Biology"
    assert assign_field("elife", ["Neuroscience", "Human biology and medicine"]).reason == "ambiguous_field"
    assert assign_field("elife", ["Research article"]).reason == "no_citeworth_field"


def test_every_journal_subject_is_mapped_and_journals_are_found_by_issn_or_title():
    from citeworth.text.field_tables import journal_table, subject_table
    from citeworth.text.fields import MULTIDISCIPLINARY, journal_subject

    assert set(journal_table().values()) <= set(subject_table())
    assert subject_table()[MULTIDISCIPLINARY] is None
    assert journal_subject("", ["1949-2553"]) == journal_subject("ONCOTARGET") == "Neoplasms"
    assert journal_subject("The Journal of Biological Chemistry") == "Biochemistry"
    assert journal_subject("Scientific Reports") == MULTIDISCIPLINARY
    assert journal_subject("A Journal nobody lists") is None
    assert assign_field("journal", ["Neoplasms"]).field == "Medicine"
    assert assign_field("journal", ["Anthropology"]).reason == "no_citeworth_field"


@pytest.mark.parametrize(("venue", "field"), [
    ("N Engl J Med", "Medicine"), ("Nucleic Acids Res.", "Biology"), ("Phys Rev Lett", "Physics"),
    ("Journal of Neurophysiology", "Biology"), ("Cancer Res", "Medicine"), ("Cell", "Biology"),
    ("J Biol Chem", None), ("J Clin Microbiol", None), ("Nature", None), ("Proc Natl Acad Sci USA", None),
])
def test_a_cited_venue_names_one_field_or_none(venue, field):
    from citeworth.text.field_words import venue_field

    assert venue_field(venue) == field


def test_an_article_of_a_multidisciplinary_journal_goes_by_the_majority_of_its_references():
    from citeworth.text.fields import reference_votes

    votes = reference_votes(["Cell", "Mol Cell", "N Engl J Med", "Nature", "J Mol Biol", "Lancet"])
    assert votes == ("Biology: 3", "Medicine: 2")
    assert assign_field("references", votes).field == "Biology"  # 3 of 5: more than half
    tied = ("Biology: 3", "Medicine: 3")
    assert assign_field("references", tied).reason == "ambiguous_field"
    assert assign_field("references", tied, multi_field="first").field == "Biology"
    assert assign_field("references", ("Biology: 2",)).reason == "no_citeworth_field"  # fewer than 3
    assert assign_field("references", ()).reason == "no_fields_of_study"
