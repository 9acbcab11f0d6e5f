"""The curation engine on constructed papers: every rejection reason, the record contract,
spans-only mode, switches, stats and determinism. Sentences are quoted (lightly cut) from the
mirrored S2ORC and unarXive papers."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from citeworth.core.paper import CitationSpan, Paper, Paragraph
from citeworth.curate.config import CurationConfig
from citeworth.curate.engine import CurationStats, Curator
from citeworth.text.sentences import SentenceSplitter


def para(marked: str, section: str = "Introduction") -> Paragraph:
    """A paragraph whose citation spans are marked «like this» in ``marked``."""
    text, spans = "", []
    for i, part in enumerate(re.split(r"«(.*?)»", marked)):
        if i % 2:
            spans.append(CitationSpan(len(text), len(text) + len(part), part, f"BIBREF{len(spans)}"))
        text += part
    return Paragraph(text, section, tuple(spans))


# S2ORC 94551546 (numeric) and 18980463 (author-year, parser left the ")" outside the span).
NUMERIC = para(
    "Gene therapy holds potential for treating many severe diseases, such as cancer and genetic "
    "diseases. Successful gene therapy depends on high-efficiency gene delivery processes «[1]» . "
    "The application of traditional viral vectors has been a challenge because of their "
    "toxicity «[2]», «[3]»."
)
AUTHOR_YEAR = para(
    "Recently, substantial progress has been achieved in understanding how subtypes of PRs are "
    "specified «(Wernet and Desplan 2004;» «Mikeladze-Dvali et al. 2005a» ). Initially, R7 and R8 "
    "express the transcription factor spalt that is required to specify them as inner PRs "
    "«(Mollereau et al. 2001)». Then, the expression in R7 of the gene prospero further distinguishes "
    "R7 from R8 by repressing R8 rhodopsins.",
    section="1. INTRODUCTION",
)
UNCITED = "Optical sections were recorded in line average mode with a picture size of 512 pixels."
METADATA = {"field_scheme": "mag", "has_abstract": True, "has_body_text": True, "has_bib_entries": True,
            "has_ref_entries": True, "has_inbound_citations": True, "venue_id": "Genes & development",
            "year": 2007}


def paper(*extra: Paragraph, paper_id: str = "18980463", fields=("Biology",), **metadata) -> Paper:
    """A paper that passes every rule with two kept paragraphs, plus ``extra`` paragraphs."""
    return Paper(paper_id=paper_id, title="Rhodopsin fates", fields_of_study=tuple(fields),
                 paragraphs=[NUMERIC, AUTHOR_YEAR, *extra], source="s2orc_json", release="20200705",
                 shard="20200705", metadata={**METADATA, **metadata})


@pytest.fixture(scope="module")
def splitter():
    return SentenceSplitter()


@pytest.fixture
def curate(splitter):
    """curate(papers, **rules) -> (records, stats) with a fresh Curator sharing one spaCy pipeline."""

    def run(papers, **rules):
        curator = Curator(CurationConfig(**rules), splitter)
        records = list(curator.curate(papers))
        return records, curator.stats

    return run


def test_records_follow_the_citeworth_contract(curate):
    records, stats = curate([paper()])
    assert [r["section_idx"] for r in records] == [0, 1]
    first = records[0]
    assert set(first) == {"paper_id", "section_idx", "section_title", "mag_field_of_study", "original_text",
                          "samples", "source", "release", "shard", "source_fields_of_study", "subject",
                          "collection"}
    assert first["paper_id"] == "18980463" and first["mag_field_of_study"] == ["Biology"]
    assert (first["subject"], first["collection"]) == (None, "s2orc_json")  # a MAG paper: no finer subject
    assert first["original_text"] == NUMERIC.text and first["section_title"] == "Introduction"
    assert (first["source"], first["release"], first["shard"]) == ("s2orc_json", "20200705", "20200705")
    uncited = NUMERIC.text[:NUMERIC.text.index(" Successful")]
    delivery = "Successful gene therapy depends on high-efficiency gene delivery processes"
    vectors = "The application of traditional viral vectors has been a challenge because of their toxicity"
    assert first["samples"] == [
        {"text": uncited, "label": "non-check-worthy", "original_text": uncited, "ref_ids": None,
         "citation_text": None},
        {"text": f"{delivery}.", "label": "check-worthy", "original_text": f"{delivery} [1] .",
         "ref_ids": [["BIBREF0"]], "citation_text": ["[1]"]},
        {"text": f"{vectors}.", "label": "check-worthy", "original_text": f"{vectors} [2], [3].",
         "ref_ids": [["BIBREF1", "BIBREF2"]], "citation_text": ["[2], [3]"]},
    ]
    second = records[1]["samples"]
    assert second[0]["text"] == ("Recently, substantial progress has been achieved in understanding how "
                                 "subtypes of PRs are specified.")
    assert second[0]["citation_text"] == ["(Wernet and Desplan 2004; Mikeladze-Dvali et al. 2005a )"]
    assert [s["label"] for s in second] == ["check-worthy", "check-worthy", "non-check-worthy"]
    assert stats.kept == 2 and stats.sentences == 6 and stats.cite_worthy == 4
    assert stats.fields == {"Biology": 2} and stats.papers_kept == 1


@pytest.mark.parametrize(("extra", "reason"), [
    (dataclasses.replace(NUMERIC, section="II. PRELIMINARIES"), "section_not_permitted"),
    (para(f"{UNCITED} Then, the larval eye was imaged again. All PRs express Rh5."), "no_citation_spans"),
    (Paragraph(NUMERIC.text, "Methods", (CitationSpan(3, 9, "[wrong", "b"),)), "bad_span"),
    (para("We project the source tensor {{formula:7fd88bcd-9013}} into its transverse components «[4]». "
          f"{UNCITED} Doing this, we use the following ansatz for the source term."), "formula_placeholder"),
    (para(f"The room segmentation is shown in Figure {{{{figure:f1}}}} for all cases «[4]». {UNCITED} "
          "It is used for all experiments."), "figure_placeholder"),
    (para("In order to evaluate the performance of BLUiR, Saha et al. use the same dataset «[4]». "
          f"{UNCITED} They report the results per project."), "missed_citation"),
    # The line break hides "et al" from the pre-split check; the sentence check sees it.
    (para("In order to evaluate the performance of BLUiR, Saha et\nal. use the same dataset «[4]». "
          f"{UNCITED} They report the results per project."), "missed_citation"),
    (para("Successful gene therapy depends on high-efficiency gene delivery processes«1». "
          f"{UNCITED} They report the results per project."), "citation_format"),
    (para("The data used for all experiments is USPTO-50k «[4]», a commonly used dataset within the "
          f"single-step retrosynthesis community. {UNCITED} It is split randomly."), "citation_not_at_end"),
    # Nothing but "!" follows the citation, yet the sentence goes on: only the split shows it.
    (para("Gene therapy depends on efficient gene delivery processes «[4]»! so it was continued in the "
          f"same sentence here. {UNCITED} It is used for all experiments."), "citation_not_at_end"),
    (para(f"Successful gene therapy depends on high-efficiency gene delivery processes «[4]». {UNCITED}"),
     "too_few_sentences"),
    (para(f"Successful gene therapy depends on high-efficiency gene delivery processes «[4]». It is so. "
          f"{UNCITED}"), "sentence_too_short"),
    (para(f"Successful gene therapy depends on high-efficiency gene delivery processes «[4]». {UNCITED} "
          "3D printing was used for all the carriers here."), "sentence_start"),
    (para(f"Successful gene therapy depends on high-efficiency gene delivery processes «[4]». {UNCITED} "
          "Complete series of optical sections were imported and processed using ImageJ"), "sentence_end"),
    (para("Casein zymography was performed in accordance to the method of «[19]». "
          f"{UNCITED} Protein band intensities were measured using ImageJ."), "hanging_citation"),
])
def test_each_paragraph_rule_rejects_with_its_reason(curate, extra, reason):
    records, stats = curate([paper(extra)])
    assert [r["section_idx"] for r in records] == [0, 1]
    assert stats.paragraphs_rejected == {reason: 1}
    assert stats.paragraphs == stats.kept + sum(stats.paragraphs_rejected.values())


@pytest.mark.parametrize(("make", "rules", "reason"), [
    (lambda: paper(has_abstract=False), {}, "no_abstract"),
    (lambda: paper(has_abstract=None), {}, "unknown_abstract"),
    (lambda: paper(has_body_text=False), {}, "no_body_text"),
    (lambda: paper(has_bib_entries=False), {}, "no_bib_entries"),
    (lambda: paper(has_ref_entries=False), {}, "no_ref_entries"),
    (lambda: paper(has_inbound_citations=False), {}, "no_inbound_citations"),
    (lambda: paper(has_inbound_citations=None), {"unknown_facts_pass": []}, "unknown_inbound_citations"),
    (lambda: paper(venue_id=None), {}, "no_venue"),
    (lambda: paper(year=2007), {"min_year": 2010}, "year_out_of_range"),
    (lambda: paper(year=None), {"max_year": 2020}, "unknown_year"),
    (lambda: paper(fields=()), {}, "no_fields_of_study"),
    (lambda: paper(field_scheme=None), {}, "unknown_field_scheme"),
    (lambda: paper(fields=("Sociology",)), {}, "no_citeworth_field"),
    (lambda: paper(fields=("Biology", "Medicine")), {}, "ambiguous_field"),
    (lambda: paper(), {"min_paper_citation_spans": 7}, "too_few_citations"),
    # The first citation of the paper's permissible sections is a superscript number.
    (lambda: dataclasses.replace(paper(), paragraphs=[
        para("Successful gene therapy depends on efficient gene delivery«1»."), NUMERIC, AUTHOR_YEAR]),
     {}, "citation_style"),
])
def test_each_paper_rule_rejects_with_its_reason(curate, make, rules, reason):
    records, stats = curate([make()], **rules)
    assert records == []
    assert stats.papers_rejected == {reason: 1}
    assert stats.paragraphs_rejected == {"paper_rejected": len(make().paragraphs)}


def test_unknown_inbound_citations_pass_by_default(curate):
    records, _ = curate([paper(has_inbound_citations=None)])
    assert len(records) == 2


def test_several_fields_can_take_the_first(curate):
    records, _ = curate([paper(fields=("Medicine", "Biology"))], multi_field="first")
    assert records[0]["mag_field_of_study"] == ["Medicine"]


def test_placeholder_citations_are_format_valid_by_switch(curate):
    unarxive = para(
        "Comprehensive searches for the atmospheres of the seven planets that transit TRAPPIST-1 have "
        "been carried out. These observations all point towards the absence of extended atmospheres "
        "«{{cite:98168ea9}}», «{{cite:4a4ec5d0}}». However, denser atmospheres are consistent with the "
        "observational limits for some TRAPPIST-1 planets «{{cite:94fa37d9}}»."
    )
    records, _ = curate([paper(unarxive)])
    assert records[2]["samples"][1]["citation_text"] == ["{{cite:98168ea9}}, {{cite:4a4ec5d0}}"]
    assert records[2]["samples"][1]["text"] == ("These observations all point towards the absence of "
                                                "extended atmospheres.")
    _, stats = curate([paper(unarxive)], accept_placeholder_citations=False)
    assert stats.paragraphs_rejected == {"citation_format": 1}


def test_citations_after_the_final_period_belong_to_its_sentence(curate):
    glued = para(
        "Raising the temperature of the bath leads to a regime where MASH reproduces the population "
        "dynamics. Finally, both FSSH and MASH give a very good description of the dynamics. Note, "
        "however, that Ehrenfest can still give significant errors, as has been found in previous "
        "work.«{{cite:97375cf8}}», «{{cite:ae55c07a}}»\n")
    records, _ = curate([paper(glued)])
    last = records[2]["samples"][-1]
    assert last["text"] == ("Note, however, that Ehrenfest can still give significant errors, as has "
                            "been found in previous work.")
    assert last["label"] == "check-worthy"
    assert last["citation_text"] == ["{{cite:97375cf8}}, {{cite:ae55c07a}}"]
    _, stats = curate([paper(glued)], attach_trailing_citations=False)
    assert stats.paragraphs_rejected == {"sentence_too_short": 1}


@pytest.mark.parametrize(("extra", "switch"), [
    (para("Casein zymography was performed in accordance to the method of «[19]». "
          f"{UNCITED} Protein band intensities were measured."), {"check_hanging_citations": False}),
    (para("In order to evaluate the performance of BLUiR, Saha et al. use the same dataset «[4]». "
          f"{UNCITED} They report the results per project."), {"check_missed_citations": False}),
    (para(f"Successful gene therapy depends on high-efficiency gene delivery processes «[4]». {UNCITED}"),
     {"min_sentences": 2}),
    (para("We project the source tensor {{formula:7fd88bcd-9013}} into its transverse components «[4]». "
          f"{UNCITED} Doing this, we use the following ansatz."), {"reject_placeholders": []}),
    (dataclasses.replace(NUMERIC, section="2. Materials and Methods"),
     {"sections": ["introduction", "*methods"]}),
])
def test_switches_turn_rules_off(curate, extra, switch):
    records, stats = curate([paper(extra)], **switch)
    assert len(records) == 3 and not stats.paragraphs_rejected


def test_spans_only_removes_the_spans_and_nothing_else(curate):
    hanging = para("Casein zymography was performed in accordance to the method of «[19]». "
                   "It is so. Protein band intensities were measured using ImageJ")
    records, stats = curate([paper(hanging)], mode="spans-only")
    assert len(records) == 3 and not stats.paragraphs_rejected
    assert records[0]["samples"][2]["text"] == ("The application of traditional viral vectors has been a "
                                                "challenge because of their toxicity,.")
    assert records[0]["samples"][2]["citation_text"] == ["[2]", "[3]"]  # not merged
    assert records[1]["samples"][0]["text"] == ("Recently, substantial progress has been achieved in "
                                                "understanding how subtypes of PRs are specified).")
    assert [s["text"] for s in records[2]["samples"]] == [
        "Casein zymography was performed in accordance to the method of.", "It is so.",
        "Protein band intensities were measured using ImageJ"]


def test_spans_only_selects_the_same_papers_and_sections(curate):
    papers = [paper(dataclasses.replace(NUMERIC, section="Acknowledgements")), paper(venue_id=None)]
    _, ours = curate(papers)
    _, baseline = curate(papers, mode="spans-only")
    assert ours.papers_rejected == baseline.papers_rejected == {"no_venue": 1}
    assert ours.paragraphs_in_sections == baseline.paragraphs_in_sections == 2


def test_extra_sections_are_permitted_beside_appendix_a(curate):
    """The study permits "Materials and methods", the plural of Appendix A's "material and methods"."""
    methods = dataclasses.replace(NUMERIC, section="2. Materials and Methods")
    _, paper_list = curate([paper(methods)])
    assert paper_list.paragraphs_rejected == {"section_not_permitted": 1}
    records, extra = curate([paper(methods)], extra_sections=["materials and methods"])
    assert not extra.paragraphs_rejected and extra.kept == 3
    assert records[-1]["section_title"] == "2. Materials and Methods"
    _, replaced = curate([paper(methods)], sections=["introduction"],
                         extra_sections=["materials and methods"])
    assert replaced.paragraphs_rejected == {} and replaced.kept == 3  # both introductions and the methods


def test_a_sentence_with_empty_brackets_drops_its_paragraph(curate):
    """eLife 06011 prints "biotin-lineage cocktail (), Sca1-Pacific Blue": a hole the gate refuses."""
    hole = para("Antibodies were from eBioscience, including biotin-lineage cocktail (), Sca1-Pacific "
                "Blue «[4]». Cells were sorted twice. Sorted cells were counted by hand.")
    called = para("Phylogenetic signal was measured with phylo.d() in the caper package «[5]». Traits "
                  "were scored blind. Each trait was scored twice.")
    _, stats = curate([paper(hole, called)])
    assert stats.paragraphs_rejected == {"empty_brackets": 1} and stats.kept == 3
    _, unchecked = curate([paper(hole)], check_missed_citations=False)
    assert not unchecked.paragraphs_rejected


def test_same_input_same_records_whatever_the_batch(curate):
    papers = [paper(paper_id=str(i)) for i in range(5)]
    first, stats_first = curate(papers)
    again, _ = curate(papers, batch_size=1)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert [r["paper_id"] for r in first] == [str(i) for i in range(5) for _ in range(2)]
    assert stats_first.candidates == stats_first.kept == 10


def test_stats_merge_and_round_trip(curate):
    _, one = curate([paper(), paper(venue_id=None)])
    _, two = curate([paper(para("Too short «[1]». Really."))])
    total = one + two
    assert total.papers == 3 and total.kept == 4
    assert total.paragraphs_rejected == {"paper_rejected": 2, "too_few_sentences": 1}
    assert total.paragraphs == total.kept + sum(total.paragraphs_rejected.values())
    as_dict = total.to_dict()
    assert list(as_dict) == sorted(as_dict)
    assert CurationStats.from_dict(json.loads(json.dumps(as_dict))) == total
    assert one.papers == 2  # + leaves its operands alone
    with pytest.raises(ValueError, match="unknown key"):
        CurationStats.from_dict({"paper": 1})


def test_a_paragraph_over_the_length_limit_is_rejected_before_anything_else(curate):
    long = para(f"{UNCITED} " * 20 + "Prior work exists «[4]».")  # ~1,800 characters
    records, stats = curate([paper(long)], max_paragraph_chars=1_000)
    assert [r["section_idx"] for r in records] == [0, 1]
    assert stats.paragraphs_rejected == {"paragraph_too_long": 1} and stats.candidates == 2
    _, unlimited = curate([paper(long)], max_paragraph_chars=None)
    assert "paragraph_too_long" not in unlimited.paragraphs_rejected


class SplitterFailingOn:
    """The real splitter, except that it raises for any batch holding ``marker`` (as a spaCy or
    pysbd error on one odd paragraph would): the curation must pin it on that paragraph's paper."""

    def __init__(self, splitter: SentenceSplitter, marker: str):
        self.splitter, self.marker = splitter, marker

    def split(self, texts):
        texts = list(texts)
        if any(self.marker in text for text in texts):
            raise ValueError(f"cannot split {self.marker}")
        return self.splitter.split(texts)


def test_a_paper_whose_curation_raises_is_handed_over_and_the_run_goes_on(splitter):
    odd = para(f"The odd paragraph cannot be split «[4]». {UNCITED} It is here for the test.")
    papers = [paper(paper_id="1"), paper(odd, paper_id="2"), paper(paper_id="3", year="twenty", venue_id="J")]
    failed = []
    curator = Curator(CurationConfig(min_year=2000), SplitterFailingOn(splitter, "odd paragraph"))
    records = list(curator.curate(papers, on_error=lambda p, exc: failed.append((p.paper_id, str(exc)))))
    assert {r["paper_id"] for r in records} == {"1"}
    assert failed == [("3", "invalid literal for int() with base 10: 'twenty'"),
                      ("2", "cannot split odd paragraph")]
    stats = curator.stats
    assert stats.papers == 3 and stats.papers_rejected == {"curation_error": 1}  # paper 3, before splitting
    assert stats.paragraphs_rejected == {"paper_rejected": 2, "curation_error": 3}  # paper 2's candidates
    assert stats.paragraphs == stats.kept + sum(stats.paragraphs_rejected.values())
    assert stats.candidates == stats.kept + stats.paragraphs_rejected["curation_error"]
    with pytest.raises(ValueError, match="cannot split"):  # without a handler it propagates
        list(Curator(CurationConfig(), SplitterFailingOn(splitter, "odd paragraph")).curate(papers[1:2]))


def test_bad_rules_fail_clearly():
    with pytest.raises(ValueError, match="mode"):
        CurationConfig(mode="spans")
    with pytest.raises(ValueError, match="citation_formats"):
        CurationConfig(citation_formats=["superscript"])
    with pytest.raises(ValueError, match="merge_gap(.|\n)*not a regex"):
        CurationConfig(merge_gap="[,;")
    with pytest.raises(ValueError, match="max_paragraph_chars"):
        CurationConfig(max_paragraph_chars=0)


# A narrative first citation, as author-year fields write them (S2ORC 18980463, lightly cut).
NARRATIVE_FIRST = para("As shown by «Wernet and Desplan (2004)», subtypes of PRs are specified early in "
                       "development. Later work confirmed this in detail. The results hold in every "
                       "species tested so far.")


@pytest.mark.parametrize(("check", "kept", "reason"), [
    ("public_code", 2, None),  # the code: the first citation contains "2004)", so the paper passes
    ("strict", 0, "citation_style"),  # a narrative first citation drops the whole paper
    ("off", 2, None),
])
def test_the_first_citation_check_follows_the_public_code_by_default(curate, check, kept, reason):
    narrative_first = dataclasses.replace(paper(), paragraphs=[NARRATIVE_FIRST, NUMERIC, AUTHOR_YEAR])
    records, stats = curate([narrative_first], first_citation_check=check)
    assert len(records) == kept
    assert stats.papers_rejected == ({reason: 1} if reason else {})
    if kept:  # the narrative paragraph itself still fails the sentence rules
        assert stats.paragraphs_rejected == {"citation_format": 1}


def test_the_default_is_the_public_code_s_check():
    assert CurationConfig().first_citation_check == "public_code"
    with pytest.raises(ValueError, match="first_citation_check"):
        CurationConfig(first_citation_check="lenient")


def test_en_dash_ranges_are_numeric_citations_by_switch(curate):
    ranged = para("Gene therapy holds potential for treating many severe diseases «[1–3]». "
                  f"{UNCITED} Successful gene therapy depends on efficient delivery «[4]».")
    records, stats = curate([paper(ranged)])
    assert records[2]["samples"][0]["citation_text"] == ["[1–3]"]
    _, stats = curate([paper(ranged)], dash_ranges=False)  # the paper's regex knows only "-"
    assert stats.paragraphs_rejected == {"citation_format": 1}
    missed = para(f"Gene therapy holds potential for treating many severe diseases [1–3]. {UNCITED} "
                  "Successful gene therapy depends on efficient delivery «[4]».")
    _, stats = curate([paper(missed)])
    assert stats.paragraphs_rejected == {"missed_citation": 1}


def test_records_keep_the_source_s_own_fields_as_provenance(curate):
    records, _ = curate([paper(fields=("Biology", "Sociology"))])
    assert records[0]["mag_field_of_study"] == ["Biology"]
    assert records[0]["source_fields_of_study"] == {"scheme": "mag", "terms": ["Biology", "Sociology"]}


def test_an_uncited_sentence_loses_a_space_before_its_stop_as_a_cited_one_does(curate):
    """The source's own "(depth of 4.8) ." would otherwise mark uncited sentences only (a cited
    sentence's " ." left by the removed span is stripped): a cue to the label."""
    spaced = "However, one cell did show a strong phase preference (modulation depth of 4.8) ."
    extra = para(f"{spaced} Successful gene therapy depends on high-efficiency gene delivery «[1]». The "
                 "application of traditional viral vectors has been a challenge because of toxicity «[2]».")
    records, _ = curate([paper(extra)])
    first = records[2]["samples"][0]
    assert first["text"] == spaced.replace(" .", ".") and first["original_text"] == spaced
    assert first["label"] == "non-check-worthy"


def test_an_author_year_citation_in_square_brackets_is_read_as_a_parenthetical_one(curate):
    """Early eLife prints "[Smith et al., 2009]": the paper's regexes know only "(...)"; with
    square_author_year (the default) it passes the format and first-citation checks."""
    extra = para("Prior work mapped the receptor in detail «[Bostrom et al., 2009]». The protein folds "
                 "fast «[Amrute-Nayak and Bullock, 2012]». We used the same constructs in every assay here.")
    kept, _ = curate([paper(extra)])
    assert kept[2]["samples"][0]["citation_text"] == ["[Bostrom et al., 2009]"]
    dropped, stats = curate([paper(extra)], square_author_year=False)
    assert len(dropped) == 2 and stats.paragraphs_rejected["citation_format"] == 1
