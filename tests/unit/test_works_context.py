"""The cited-works ranker in a draft's context: co-citation counted by hand and read back from the
fixture corpus's index, the draft's title and abstract as the LaTeX and Markdown readers give them,
and ``citeworth check --suggest --works`` suggesting a work that only the draft's ``.bib``
(co-citation) or only its abstract points to, saying why."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
from test_check_command import model_dir, run  # noqa: F401 (model_dir: a fixture)
from test_works import built  # noqa: F401 (a fixture)
from works_corpus import ATTENTION, CORAL, HEAT, WHEAT

from citeworth.check.latex import read_tex_text
from citeworth.check.markdown import read_markdown
from citeworth.suggest import cocitation
from citeworth.suggest.works import FEATURES, LearnedModel, Query, WorksIndex, WorksRanker


def test_cocitation_counts_the_units_a_candidate_shares_with_each_known_work(tmp_path):
    """Paper 0 cites works 0, 1, 2; paper 1 cites 0 and 1; paper 2 cites 2 and 3; work 4: none."""
    papers, works = np.array([2, 0, 1, 0, 2, 1, 0]), np.array([3, 0, 1, 2, 2, 0, 1])
    relation = cocitation.Relation.of_pairs(papers, works, 5)
    assert relation.counts(np.array([0])).tolist() == [2, 2, 1, 0, 0]  # papers 0 and 1 cite work 0
    # known 0 and 2: paper 0 cites both (weight 2), papers 1 and 2 one each
    assert relation.counts(np.array([0, 2])).tolist() == [3, 3, 3, 1, 0]
    assert relation.counts(np.zeros(0, dtype=np.int64)).tolist() == [0] * 5
    assert relation.shared(1, np.array([0, 2, 3])) == [(0, 2), (2, 1)]
    cocitation.save(tmp_path, {"papers": relation, "paragraphs": relation})
    loaded = cocitation.load(tmp_path)["paragraphs"]
    assert loaded.counts(np.array([0, 2])).tolist() == [3, 3, 3, 1, 0]


def test_the_index_knows_which_papers_and_paragraphs_cite_which_works(built):  # noqa: F811
    """a-reefs and b-crops both cite CORAL and WHEAT (one paragraph each); c-heat cites CORAL and HEAT."""
    index = WorksIndex(built / "data" / "works")
    try:
        row = {title: index.find({}, title, (last,), year)
               for title, last, year in [(w["title"], w["last"], w["year"]) for w in (CORAL, WHEAT, HEAT)]}
        attention = index.find({"doi": "10.5555/attention"}, None, (), None)
        coral, wheat, heat = (row[w["title"]] for w in (CORAL, WHEAT, HEAT))
        for relation in index.cocited.values():
            counts = relation.counts(np.array([wheat]))
            assert counts[coral] == 2 and counts[attention] == 1 and counts[heat] == 0
            assert relation.counts(np.array([heat]))[coral] == 1
        ranker = WorksRanker(index)
        [ranked] = ranker.rank([Query("Later surveys repeated this finding.", known=(wheat,))], 5)
        why = {r.work.title: r.why for r in ranked}
        assert set(why) == {CORAL["title"], ATTENTION["title"]}  # and its copy: WHEAT's co-cited works
        assert f"co-cited with '{WHEAT['title']} (2019)' in 2 papers" in why[CORAL["title"]]
        assert f"co-cited with '{WHEAT['title']} (2019)' in 1 paper" in why[ATTENTION["title"]]
        assert ranker.rank([Query("Later surveys repeated this finding.")], 3) == [[]]
    finally:
        index.close()


def test_a_learned_model_scores_its_features_and_counts_a_missing_one_as_its_mean(tmp_path):
    model = LearnedModel(("bm25", "dense"), (1.0, 0.5), (2.0, 0.25), (3.0, -1.0), {"data": "by hand"})
    scores, parts = model.score({"bm25": np.array([1.0, 5.0]), "dense": np.array([0.5, 1.0])})
    assert parts.tolist() == [[0.0, 6.0], [0.0, -2.0]] and scores.tolist() == [0.0, 4.0]
    assert model.score({"bm25": np.array([3.0])})[0].tolist() == [3.0]
    model.write(tmp_path / "model.json")
    assert LearnedModel.read(tmp_path / "model.json") == model
    shipped = LearnedModel.shipped()  # what benchmarks/works.py --train wrote: features it knows, and how
    assert set(shipped.features) <= set(FEATURES) and "bm25" in shipped.features
    assert len(shipped.weights) == len(shipped.features) and all(scale > 0 for scale in shipped.scale)
    assert shipped.trained["dev"]["recall@10"] > 0
    assert shipped.trained["command"].startswith("python benchmarks/works.py")


def test_the_drafts_title_and_abstract_come_from_latex_and_markdown():
    tex = read_tex_text(rb"""\documentclass{article}
\title{Thermal tolerance of reef fish}
\begin{document}
\begin{abstract}
We measure heat shock proteins \cite{okafor20} in reef fish.
\end{abstract}
Body text.
\end{document}
""")
    assert tex.title == "Thermal tolerance of reef fish"
    assert tex.abstract == "We measure heat shock proteins in reef fish."
    markdown = "---\ntitle: Reef fish\nabstract: |\n  Heat shock\n  proteins.\n---\n\n# Intro\n\nText.\n"
    front = read_markdown(markdown, "a.md")
    assert (front.title, front.abstract) == ("Reef fish", "Heat shock proteins.")
    heading = read_markdown("# Heat shock in reef fish\n\nText.\n", "b.md")
    assert (heading.title, heading.abstract) == ("Heat shock in reef fish", None)
    assert read_markdown("Text only.\n", "c.md").title is None


CONTEXT_DRAFT = r"""\documentclass{article}
\title{Thermal tolerance}
\begin{document}
%s
Later surveys repeated this finding.
\bibliography{refs}
\end{document}
"""
ABSTRACT = "\\begin{abstract}\nWe measure heat shock proteins in reef fish.\n\\end{abstract}"
WHEAT_BIB = ("@article{garcia19,\n  title = {" + WHEAT["title"]
             + "},\n  author = {Garcia, A.},\n  year = {2019}\n}\n")


def _works_for_the_last_sentence(capsys, folder, index, model, abstract: str, bib: str | None) -> list[dict]:
    (folder / "main.tex").write_text(CONTEXT_DRAFT % abstract)
    (folder / "refs.bib").unlink(missing_ok=True)
    if bib is not None:
        (folder / "refs.bib").write_text(bib)
    code, out, err = run(capsys, str(folder / "main.tex"), "--model", str(model), "--threshold", "0",
                         "--suggest", "--works", str(index), "--format", "jsonl", "--top-k", "3")
    assert code == 1, err
    last = [json.loads(line) for line in out.splitlines()][-1]
    assert last["text"] == "Later surveys repeated this finding."
    return [s for s in last.get("suggestions", []) if s["source"] == "works"]


def test_check_suggests_a_work_only_the_drafts_bib_or_only_its_abstract_points_to(
        built, model_dir, tmp_path, capsys):  # noqa: F811
    def works_found(abstract: str, bib: str | None) -> list[dict]:
        index = built / "data" / "works"
        return _works_for_the_last_sentence(capsys, tmp_path, index, model_dir, abstract, bib)

    # the sentence shares no word with any work: alone, the index has nothing for it
    assert works_found("", None) == []
    # the .bib cites WHEAT, which the corpus's papers cite beside CORAL: co-citation finds CORAL
    found = {s["identifier"]: s for s in works_found("", WHEAT_BIB)}
    assert set(found) == {"doi:10.5555/coral", "doi:10.5555/attention", "doi:10.5555/attention-copy"}
    assert f"co-cited with '{WHEAT['title']} (2019)' in 2 papers" in found["doi:10.5555/coral"]["why"]
    # the abstract is about heat shock proteins in reef fish: HEAT, cited for exactly that
    found = works_found(ABSTRACT, None)
    heat = next(s for s in found if s["identifier"] == "doi:10.5555/heat")
    assert "matches your title and abstract" in heat["why"]
    # a-reefs, the indexed paper most like the draft (its name says reefs), cites ATTENTION
    attention = next(s for s in found if s["title"] == ATTENTION["title"])
    assert "cited by papers like yours (their titles and abstracts)" in attention["why"]


def test_a_drafts_sentence_is_asked_with_its_neighbours_its_drafts_works_and_those_cited_just_before(
        built):  # noqa: F811
    from citeworth.drafts import Draft, Sentence
    from citeworth.suggest.candidates import Candidate
    from citeworth.suggest.draft import DraftBib, WorkSuggester

    def sentence(file: str, offset: int, text: str, *keys: str) -> Sentence:
        return Sentence(file, 1, offset, 1, offset + 1, text, bool(keys), offset, cite_keys=keys)

    index = WorksIndex(built / "data" / "works")
    try:
        own = [Candidate("garcia19", WHEAT["title"], ("Garcia",), 2019),
               Candidate("hughes17", CORAL["title"], ("Hughes",), 2017, ids={"doi": "10.5555/coral"}),
               Candidate("okafor20", HEAT["title"], ("Okafor",), 2020, ids={"doi": "10.5555/heat"}),
               Candidate("nowhere", "A work the index lacks", ("Nobody",), 1999)]
        draft = Draft("main.tex", [], lambda offset: None, title="Thermal tolerance", abstract="Reef fish.")
        sentences = [sentence("main.tex", 0, "Wheat fixes carbon.", "garcia19"),
                     sentence("main.tex", 10, "Corals bleach.", "hughes17"),
                     sentence("main.tex", 20, "Later surveys repeated this finding."),
                     sentence("main.tex", 30, "Fish adapt."),
                     sentence("other.tex", 40, "Another file.", "garcia19"),
                     replace(sentence("other.tex", 50, "Another paragraph."), paragraph=1)]
        works = WorkSuggester(WorksRanker(index), own, DraftBib(None), draft, sentences)
        wheat, coral, heat = works.rows["garcia19"], works.rows["hughes17"], works.rows["okafor20"]
        assert set(works.rows) == {"garcia19", "hughes17", "okafor20"}  # the fourth is not in the index
        assert works.exclude == {wheat, coral, heat}  # never suggested: the .bib has them
        # the works the draft cites are the evidence (HEAT is in its .bib, cited nowhere)
        query = works.query(sentences[2])
        assert query == Query("Later surveys repeated this finding.", "Corals bleach. Fish adapt.",
                              "Thermal tolerance Reef fish.", tuple(sorted((wheat, coral))),
                              tuple(sorted((wheat, coral))))
        assert works.query(sentences[3]).nearby == tuple(sorted((wheat, coral)))  # the three before it
        assert works.query(sentences[4]).neighbours == "" and works.query(sentences[4]).nearby == ()
        assert works.query(sentences[5]).neighbours == "" and works.query(sentences[5]).nearby == ()
        assert works.query("typed in a completion") == Query("typed in a completion", "",
                                                             "Thermal tolerance Reef fish.", query.known)
        uncited = [replace(s, cite_keys=()) for s in sentences]  # a numbered draft: no keys to go by
        assert WorkSuggester(WorksRanker(index), own, DraftBib(None), draft, uncited).known == (
            tuple(sorted((wheat, coral, heat))))
    finally:
        index.close()
