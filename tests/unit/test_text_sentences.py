"""Sentence splitting (scispacy tokenizer + pysbd, or a named pipeline) as character offsets,
and sentences joined where a citation span crosses a boundary."""

from __future__ import annotations

import pytest
import spacy

from citeworth.core.errors import StageFailed
from citeworth.text.sentences import SentenceSplitter, attach_citation_only, join_across, join_et_al

# S2ORC 18980463 (Genes & Development), body paragraph.
PARAGRAPH = (
    "Although much is known about the development of the adult visual system, little is known about "
    "the development and function of the larval visual system. PRs of the larval eye (Bolwig Organ [BO] ) "
    "extend their axonal projections to the larval pacemaker neurons (Malpel et al. 2002) . Visual input "
    "via the larval eye is crucial for the entrainment of the molecular clock."
)
# unarXive 2212 sample: LaTeX source lines kept as line breaks inside one sentence.
LINE_BROKEN = (
    "Kirkpatrick developed an approximate method using ZINDO,\nwhich avoids a full SCF treatment of the "
    "pair of interacting moieties,\nrequiring only an SCF treatment of each moiety separately. It works.\n"
)


@pytest.fixture(scope="module")
def splitter():
    return SentenceSplitter(batch_size=2)


def test_sentences_are_offsets_without_surrounding_space(splitter):
    [bounds] = splitter.split([PARAGRAPH])
    sentences = [PARAGRAPH[a:b] for a, b in bounds]
    assert len(sentences) == 3
    assert sentences[0].startswith("Although") and sentences[0].endswith("visual system.")
    assert sentences[1].endswith("(Malpel et al. 2002) .")
    assert all(s == s.strip() for s in sentences)


def test_line_breaks_inside_a_paragraph_do_not_end_sentences(splitter):
    [bounds] = splitter.split([LINE_BROKEN])
    sentences = [LINE_BROKEN[a:b] for a, b in bounds]
    assert sentences == [LINE_BROKEN.split(" It works.")[0], "It works."]


def test_no_break_spaces_do_not_swallow_a_sentence(splitter):
    # unarXive 2212 sample: scispacy alone drops the second sentence, which ends in "\xa0".
    text = ("Attackers can deliberately influence the training dataset to manipulate the results of a "
            "predictive model. A poisoning attack adds poisoned instances to the training set.\xa0\nIf we "
            "consider one ML application, spam detection is an example.")
    [bounds] = splitter.split([text])
    assert [text[a:b][:12] for a, b in bounds] == ["Attackers ca", "A poisoning ", "If we consid"]


def test_a_citation_glued_to_the_period_does_not_merge_sentences(splitter):
    # unarXive 2212 sample: "previous work.{{cite:...}}" at the end of a paragraph.
    text = ("Both methods give a very good description of the dynamics. Note, however, that Ehrenfest "
            "can still give significant errors, as has been found in previous work.{{cite:97375cf8}}, "
            "{{cite:ae55c07a}}\n")
    [bounds] = splitter.split([text])
    assert [text[a:b] for a, b in bounds] == [
        "Both methods give a very good description of the dynamics.",
        "Note, however, that Ehrenfest can still give significant errors, as has been found in previous "
        "work.",
        "{{cite:97375cf8}}, {{cite:ae55c07a}}"]


def test_et_dot_al_does_not_end_a_sentence(splitter):
    """Authors' typo "et. al." (unarXive 2212 sample: "Crameri et. al. {{cite:...}}", a PLOS ONE
    article: "Moghaddami et. al. [514]"): pysbd ended the sentence at "et."; only a cut between
    "et." and "al." is joined."""
    texts = ["Prior work by Guo and Ye et. al. [17] studied this. Another sentence follows.",
             "The scientific colour maps developed by Crameri et. al. {{cite:c568}} are used here.",
             "As shown by Ye et. al, the model works."]
    split = splitter.split(texts)
    found = [[text[a:b] for a, b in bounds] for text, bounds in zip(texts, split, strict=True)]
    assert found == [["Prior work by Guo and Ye et. al. [17] studied this.", "Another sentence follows."],
                     [texts[1]], [texts[2]]]
    assert join_et_al("The budget. al. Then.", [(0, 11), (12, 21)]) == [(0, 11), (12, 21)]  # not "et."


def test_batches_keep_input_order(splitter):
    texts = [PARAGRAPH, LINE_BROKEN, "One short sentence here. And a second one.", PARAGRAPH]
    assert list(splitter.split(texts)) == [next(splitter.split([t])) for t in texts]


def test_sentences_crossed_by_a_span_are_joined():
    bounds = [(0, 10), (11, 20), (21, 30), (31, 40)]
    assert join_across(bounds, [(8, 13)]) == [(0, 20), (21, 30), (31, 40)]
    assert join_across(bounds, [(5, 25)]) == [(0, 30), (31, 40)]  # a span over three sentences
    assert join_across(bounds, [(11, 15), (35, 38)]) == bounds  # spans inside sentences, or at a start
    assert join_across(bounds, []) == bounds


def test_citation_only_sentences_join_the_one_before():
    text = "First sentence here. Second one [3]. {{cite:a}}, {{cite:b}}. Third sentence here."
    bounds = [(0, 20), (21, 36), (37, 61), (62, 82)]
    spans = [(32, 35), (37, 47), (49, 59)]
    assert attach_citation_only(text, bounds, spans) == [(0, 20), (21, 61), (62, 82)]
    assert attach_citation_only(text, bounds, spans[:1]) == bounds  # no span: a sentence of its own


def test_a_named_pipeline_is_loaded_instead(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "pipeline")
    named = SentenceSplitter(str(tmp_path / "pipeline"))
    assert "pysbd_sentencizer" not in named.nlp.pipe_names
    [bounds] = named.split(["First sentence here. Second sentence here."])
    assert bounds == [(0, 20), (21, 42)]


def test_a_missing_pipeline_fails_clearly():
    with pytest.raises(StageFailed, match="en_core_sci_missing.*spacy_model to null"):
        SentenceSplitter("en_core_sci_missing")
