"""The paper index the corpora share: papers by identifier and title hash, on disk."""

from __future__ import annotations

from citeworth.core.paper import BibEntry, CitationSpan, Paper, Paragraph
from citeworth.corpora.paper_index import PaperIndex, lookup_keys, title_key


def test_titles_are_compared_case_folded_without_spacing_or_a_final_period():
    assert title_key(" Deep\nNets WORK. ") == "deep nets work"
    assert lookup_keys({"pmid": "7", "doi": "10.1/a"}, "Deep nets work")[:2] == ["doi:10.1/a", "pmid:7"]
    assert lookup_keys({}, "Deep  NETS work.") == lookup_keys({}, "deep nets work")
    assert lookup_keys({}, None) == []


def test_with_abstract_finds_cited_papers_by_identifier_then_title(tmp_path):
    index = PaperIndex(tmp_path / "corpus.sqlite")
    index.add(Paper("a", "Deep Nets Work.", (), [], ids={"doi": "10.1/a"}, abstract="About nets."))
    index.add(Paper("b", "No abstract", (), [], ids={"doi": "10.1/b"}))
    index.add(Paper("a2", "Deep Nets Work", (), [], ids={"doi": "10.1/a"}, abstract="Read second."))
    found = index.with_abstract({"title": None, "ids": {"doi": "10.1/a"}})
    assert (found.paper_id, found.title, found.abstract) == ("a", "Deep Nets Work.", "About nets.")
    assert index.with_abstract({"title": "deep  nets work", "ids": {"doi": "10.9/x"}}).paper_id == "a"
    assert index.with_abstract({"title": "No abstract", "ids": {"doi": "10.1/b"}}) is None
    assert found.body is None and found.bibliography is None  # text is kept only when asked for


def test_best_content_prefers_full_text_and_keeps_resolved_citations_and_the_bibliography(tmp_path):
    index = PaperIndex(tmp_path / "corpus.sqlite", keep_text=True)
    text = "Nets work [1]. They do."
    body = [Paragraph(text, "Intro", (CitationSpan(10, 13, "[1]"),))]  # unlinked: resolved by its number
    index.add(Paper("abstract-only", "Nets", (), [], ids={"doi": "10.1/n"}, abstract="About nets."))
    bibliography = {"b0": BibEntry("b0", "Older nets", ids={"arxiv": "1234.5678"})}
    index.add(Paper("full", "Nets", (), body, bibliography, source="s2orc_json", ids={"s2": "99"}))
    index.add(Paper("empty", "Nothing", (), [], ids={"doi": "10.1/e"}))
    cited = index.best_content({"title": "nets", "ids": {"doi": "10.1/n"}})
    assert cited.paper_id == "full" and cited.full_text  # full text beats a better key with an abstract only
    assert cited.body == [[text, [[10, 13, ["b0"]]]]]
    assert cited.bibliography == {"b0": {"title": "Older nets", "ids": {"arxiv": "1234.5678"}}}
    assert index.best_content({"title": None, "ids": {"doi": "10.1/n"}}).paper_id == "abstract-only"
    assert index.best_content({"title": "Nothing", "ids": {}}) is None  # no text of any kind
    assert index.best_content({"title": None, "ids": {}}) is None
    assert index.get("s2orc_json", "full").rowid == cited.rowid and index.get("s2orc_json", "x") is None
