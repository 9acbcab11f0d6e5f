"""The cited-works index: the works stage on a fixture corpus written here (``works_corpus.py``):
references resolved to works by the identity rules, metadata, citing-paper counts and citing
sentences, the same bytes on a second build; the index read back (lookups, another format refused);
the fused ranking against hand-computed cases; the citing sentences of a paragraph; BibTeX entries
(stable keys, no duplicate by DOI, escaping); and ``citeworth check --suggest --works`` end to end."""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest
from test_check_command import model_dir, run  # noqa: F401 (model_dir: a fixture)
from works_corpus import A_SENTENCES, ATTENTION, CORAL, HEAT, WHEAT, write_works_corpus

from citeworth.core.paper import CitationSpan
from citeworth.sources import InputSpec
from citeworth.suggest.bibtex import BibWork, bibtex_entry, entry_key, same_work_key
from citeworth.suggest.cited_works.params import WorksParams
from citeworth.suggest.cited_works.stage import works
from citeworth.suggest.contexts import citing_sentences
from citeworth.suggest.draft import bib_problem
from citeworth.suggest.ranker import RRF_K
from citeworth.suggest.works import PRIOR, WorksIndex, WorksIndexError, WorksRanker, fused


def _params(root: Path, glob: str, **overrides) -> WorksParams:
    return WorksParams(**{"inputs": [InputSpec("s2orc_json", glob)], "data_dir": root / "data" / "citeworth",
                          "out_dir": root / "data" / "works", "stats_path": root / "reports" / "works.json",
                          **overrides})


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("works")
    summary = works(_params(root, write_works_corpus(root)))
    assert summary["counts"]["papers_indexed"] == 3
    return root


def _works(root: Path) -> dict[str, dict]:
    db = sqlite3.connect(root / "data" / "works" / "works.sqlite")
    found = {}
    for row, identifier, title, authors, year, venue, ids, cited_by in db.execute("SELECT * FROM works"):
        contexts = [text for (text,) in db.execute("SELECT text FROM contexts WHERE work = ?", (row,))]
        found[title] = {"row": row, "identifier": identifier, "authors": json.loads(authors), "year": year,
                        "venue": venue, "ids": json.loads(ids), "cited_by": cited_by, "contexts": contexts}
    db.close()
    return found


def test_every_reference_is_one_work_by_the_identity_rules(built):
    found = _works(built)
    assert set(found) == {CORAL["title"], WHEAT["title"], ATTENTION["title"], HEAT["title"]}
    coral = found[CORAL["title"]]  # by DOI + PMID, by PMID alone, by an upper-case DOI: one work
    assert coral["identifier"] == "doi:10.5555/coral"
    assert coral["ids"] == {"doi": "10.5555/coral", "pmid": "1111"}
    assert coral["cited_by"] == 3 and coral["venue"] == "Nature" and coral["year"] == 2017
    wheat = found[WHEAT["title"]]  # no identifier: one work by title, first author and year
    assert wheat["identifier"].startswith("fallback:") and wheat["cited_by"] == 2
    assert wheat["authors"] == ["Garcia"]
    attention = [w for w in _all_rows(built) if w[2] == ATTENTION["title"]]
    assert sorted(w[1] for w in attention) == ["doi:10.5555/attention", "doi:10.5555/attention-copy"]
    counts = json.loads((built / "reports" / "works.json").read_text())["counts"]
    assert counts["works"] == 5 and counts["references_without_identity"] == 1
    assert counts["references"] == 8 and counts["works_cited_by_2_or_more"] == 2


def _all_rows(root: Path) -> list[tuple]:
    db = sqlite3.connect(root / "data" / "works" / "works.sqlite")
    try:
        return db.execute("SELECT * FROM works ORDER BY row").fetchall()
    finally:
        db.close()


def test_a_work_keeps_the_sentences_citing_it_markers_removed(built):
    coral = _works(built)[CORAL["title"]]
    assert coral["contexts"] == ["Coral reefs bleach when ocean temperatures stay high for weeks.",
                                 "Mass bleaching of corals followed the marine heatwave.",
                                 "Corals bleach during marine heatwaves."]


def test_the_same_inputs_give_the_same_bytes_and_the_works_come_out_by_identifier(built):
    first = _tree(built / "data" / "works")
    works(_params(built, str(built / "raw" / "s2orc" / "*.json")))  # the same params: run again
    assert _tree(built / "data" / "works") == first
    assert {"works.sqlite", "cited_by.npy", "bm25/vocab.index.json"} <= set(first)
    identifiers = [row[1] for row in _all_rows(built)]
    assert identifiers == sorted(identifiers)


def _tree(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_train_only_and_dataset_contexts(built, tmp_path):
    glob = str(built / "raw" / "s2orc" / "*.json")
    works(_params(built, glob, splits=["train"], contexts="dataset", out_dir=tmp_path / "works",
                  stats_path=tmp_path / "works.json"))
    index = WorksIndex(tmp_path / "works")
    try:
        coral = index.find({"doi": "10.5555/coral"}, None, (), None)
        assert index.work(coral).cited_by == 2  # c-heat (test) is not indexed
        assert index.contexts(coral) == ["Coral reefs bleach when ocean temperatures stay high for weeks.",
                                         "Mass bleaching of corals followed the marine heatwave."]
        assert index.find({"doi": "10.5555/heat"}, HEAT["title"], ("Okafor",), 2020) is None
    finally:
        index.close()


def test_a_reference_finds_its_work_by_identifier_else_title_author_and_year(built):
    index = WorksIndex(built / "data" / "works")
    try:
        coral = index.find({"pmid": "1111"}, None, (), None)
        assert index.work(coral).title == CORAL["title"]
        assert index.find({"doi": "10.5555/coral"}, None, (), None) == coral
        wheat = index.find({}, WHEAT["title"] + ".", ("García",), 2019)  # case, accents, final stop
        assert index.work(wheat).title == WHEAT["title"]
        assert index.find({}, WHEAT["title"], ("Garcia",), 2018) is None
        assert index.work(coral).label == f"{CORAL['title']} (2017)"
    finally:
        index.close()


def test_the_fused_ranking_matches_a_hand_computation():
    """Three candidates: BM25 3.0, 0 and 1.0, the prior lifting each it scores by PRIOR * ln(1 + citing
    papers) (2, 5 and 1 papers): 3 + 2 ln 3 = 5.20 > 1 + 2 ln 2 = 2.39, so 0 before 2 and 1 unranked;
    dense 1 > 0 > 2; the sentence names candidate 2's first author (+1)."""
    signals = {"bm25": np.array([[3.0, 0.0, 1.0]]), "dense": np.array([[0.5, 0.9, 0.1]]),
               "authors": np.array([[0.0, 0.0, 1.0]]), "cited_by": np.array([[2.0, 5.0, 1.0]])}
    k = RRF_K
    assert PRIOR == 2.0
    expected = [1 / (k + 1) + 1 / (k + 2), 0 + 1 / (k + 1), 1.0 + 1 / (k + 2) + 1 / (k + 3)]
    assert np.allclose(fused(signals)[0], expected)
    assert list(np.argsort(-fused(signals)[0])) == [2, 0, 1]
    # the prior reorders: BM25 1.0 vs 1.5, but 20 papers cite the first (1 + 2 ln 21 = 7.09 > 1.5 + 2 ln 2)
    close = {"bm25": np.array([[1.0, 1.5]]), "authors": np.zeros((1, 2)), "cited_by": np.array([[20.0, 1.0]])}
    assert np.allclose(fused(close)[0], [1 / (k + 1), 1 / (k + 2)])
    without = {name: value for name, value in close.items() if name != "cited_by"}
    assert np.allclose(fused(without)[0], [1 / (k + 2), 1 / (k + 1)])
    assert math.isclose(fused({"bm25": np.array([[0.0]]), "cited_by": np.array([[9.0]])})[0][0], 0.0)


def test_the_ranker_finds_the_work_a_sentence_means_and_leaves_out_the_drafts_own(built):
    index = WorksIndex(built / "data" / "works")
    try:
        ranker = WorksRanker(index)
        coral = index.find({"doi": "10.5555/coral"}, None, (), None)
        [[first, *_]] = ranker.rank(["Corals bleach in marine heatwaves."], 3)
        assert first.work.row == coral and first.work.cited_by == 3
        [ranked] = ranker.rank(["Corals bleach in marine heatwaves."], 3, exclude=[coral])
        assert coral not in [r.work.row for r in ranked]
        [[first, *_]] = ranker.rank(["As Garcia showed, crops respond to carbon dioxide."], 3)
        assert first.work.title == WHEAT["title"]  # the surname puts its work first
        assert ranker.rank(["Nothing matches here, zzz."], 3) == [[]]
    finally:
        index.close()


def test_an_index_of_another_format_or_none_says_so(built, tmp_path):
    with pytest.raises(WorksIndexError, match="no cited-works index .*citeworth run works"):
        WorksIndex(tmp_path)
    (tmp_path / "works.sqlite").write_text("not a database at all" * 100)
    with pytest.raises(WorksIndexError, match="not a cited-works index"):
        WorksIndex(tmp_path)
    copy = tmp_path / "old"
    copy.mkdir()
    (copy / "works.sqlite").write_bytes((built / "data" / "works" / "works.sqlite").read_bytes())
    db = sqlite3.connect(copy / "works.sqlite")
    db.execute("UPDATE meta SET value = '0' WHERE key = 'format'")
    db.execute("UPDATE meta SET value = '\"0.0.1\"' WHERE key = 'citeworth'")
    db.commit()
    db.close()
    with pytest.raises(WorksIndexError, match=r"format 0, built by citeworth 0\.0\.1; this citeworth .* "
                                              r"reads format 2: rebuild it"):
        WorksIndex(copy)


def test_citing_sentences_are_cut_at_sentence_ends_never_inside_a_marker():
    text = ("Reefs bleach (Hughes et al. 2017; Lee 2018). As shown in Fig. 2, e.g. in wheat, yields rise "
            "[1, 2]. No citation here. Smith et al. found it [3]-[5].")
    spans = []
    for marker, ref_ids in (("(Hughes et al. 2017;", ("h",)), ("Lee 2018)", ("l",)), ("[1, 2]", ("w1", "w2")),
                            ("[3]", ("s3",)), ("[5]", ("s5",))):
        start = text.index(marker)
        spans.append(CitationSpan(start, start + len(marker), marker, cites=ref_ids))
    assert list(citing_sentences(text, spans)) == [
        ("Reefs bleach.", ("h", "l")),
        ("As shown in Fig. 2, e.g. in wheat, yields rise.", ("w1", "w2")),
        ("Smith et al. found it.", ("s3", "s5"))]
    assert list(citing_sentences("A sentence with no marker.", [])) == []


def test_bibtex_entries_have_stable_keys_escaped_fields_and_no_duplicate_by_doi():
    work = BibWork("Global warming & the 100% bleaching of corals_", ("Hughes", "Kerry"), 2017, "Nature",
                   {"doi": "10.5555/coral", "pmid": "1111"})
    assert entry_key(work, []) == "hughes2017global"
    assert entry_key(work, ["Hughes2017Global", "hughes2017globala"]) == "hughes2017globalb"
    assert bibtex_entry(work, "hughes2017global") == (
        "@article{hughes2017global,\n  author = {Hughes and Kerry},\n"
        "  title = {Global warming \\& the 100\\% bleaching of corals\\_},\n  journal = {Nature},\n"
        "  year = {2017},\n  doi = {10.5555/coral},\n  pmid = {1111}\n}\n")
    anonymous = BibWork("The role of RNA", (), None, None, {})
    assert entry_key(anonymous, []) == "anonrole" and bibtex_entry(anonymous, "x").startswith("@misc{x,")
    assert entry_key(BibWork(None, ("Müller",), 2020, None, {}), []) == "muller2020"
    entries = {"a": {"doi": "10.1/other"}, "Hughes17": {"doi": "10.5555/coral"}}
    assert same_work_key(work, entries) == "Hughes17"
    assert same_work_key(work, {"a": {}}) is None


def test_a_bib_that_cannot_take_an_entry_says_why(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a,\n  title = {A},\n  year = {2001}\n}\n")
    entry = "@misc{b,\n  title = {B}\n}\n"
    assert bib_problem(bib, bib.read_text(), entry) is None
    assert "already has an entry 'a'" in bib_problem(bib, bib.read_text(), "@misc{A,\n title = {x}\n}\n")
    bib.write_text(bib.read_text() + "@article{broken,\n  title = {never closes\n")
    assert "1 block(s) BibTeX cannot parse" in bib_problem(bib, bib.read_text(), entry)
    bib.write_text("@article{a,\n  title = {A}\n}\n")
    bib.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        assert bib_problem(bib, bib.read_text(), entry) == f"{bib} is read-only: no entry can be added to it"
    finally:
        bib.chmod(stat.S_IRUSR | stat.S_IWUSR)


DRAFT = r"""\documentclass{article}
\begin{document}
Corals bleach during long marine heatwaves.

Self-attention replaced recurrence in machine translation.
\bibliography{refs}
\end{document}
"""
REFS = "@article{vaswani17,\n  title = {Attention is all you need},\n  author = {Vaswani, A.},\n" \
       "  year = {2017},\n  doi = {10.5555/attention}\n}\n"


def test_check_suggests_the_index_works_after_the_drafts_own_entries(built, model_dir, tmp_path, capsys):  # noqa: F811
    (tmp_path / "main.tex").write_text(DRAFT)
    (tmp_path / "refs.bib").write_text(REFS)
    index = str(built / "data" / "works")
    code, out, err = run(capsys, str(tmp_path / "main.tex"), "--model", str(model_dir), "--threshold", "0",
                         "--suggest", "--works", index, "--format", "jsonl", "--top-k", "2")
    assert code == 1, err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["suggestions"][0]["source"] == "bibliography"
    work = first["suggestions"][1]
    assert work == {"key": "hughes2017global", "title": CORAL["title"], "score": work["score"],
                    "source": "works", "identifier": "doi:10.5555/coral", "year": 2017, "cited_by": 3,
                    "bibtex": "@article{hughes2017global,\n  author = {Hughes},\n  title = {" + CORAL["title"]
                    + "},\n  journal = {Nature},\n  year = {2017},\n  doi = {10.5555/coral},\n"
                    "  pmid = {1111}\n}\n",
                    "bib": str(tmp_path / "refs.bib"), "bib_problem": None, "why": work["why"]}
    assert work["why"] and all(isinstance(reason, str) for reason in work["why"])
    works_for_attention = [s for s in second["suggestions"] if s["source"] == "works"]
    assert "doi:10.5555/attention" not in [s["identifier"] for s in works_for_attention]  # the .bib has it
    assert "doi:10.5555/attention-copy" in [s["identifier"] for s in works_for_attention]
    code, out, _ = run(capsys, str(tmp_path / "main.tex"), "--model", str(model_dir), "--threshold", "0",
                       "--suggest", "--works", index, "--top-k", "1")
    assert f"works: {CORAL['title']} (2017, doi:10.5555/coral, cited by 3 papers in the corpus; " in out


def test_check_works_needs_suggest_and_an_index(built, model_dir, tmp_path, capsys):  # noqa: F811
    (tmp_path / "main.tex").write_text(DRAFT)
    with pytest.raises(SystemExit):
        run(capsys, str(tmp_path / "main.tex"), "--works", str(built / "data" / "works"))
    assert "--works needs --suggest" in capsys.readouterr().err
    code, _, err = run(capsys, str(tmp_path / "main.tex"), "--model", str(model_dir), "--suggest",
                       "--works", str(tmp_path / "nowhere"))
    assert code == 2 and "no cited-works index (build one with `citeworth run works`)" in err


def test_a_sentence_of_the_fixture_is_what_the_dataset_holds():
    """The fixture's curated samples are its sentences with their markers removed."""
    assert A_SENTENCES[0][0].replace(" (Hughes et al., 2017)", "") == \
        "Coral reefs bleach when ocean temperatures stay high for weeks."


def test_with_an_encoder_the_index_holds_title_vectors_and_an_hnsw_graph_the_same_each_time(built, tmp_path):
    from citeworth.suggest.dense import Encoder

    params = _params(built, str(built / "raw" / "s2orc" / "*.json"), out_dir=tmp_path / "dense",
                     stats_path=tmp_path / "works.json", dense={"encoder": "embedded", "batch_size": 8})
    works(params)
    first = _tree(tmp_path / "dense")
    assert {"vectors.npy", "vectors.hnsw", "vectors.hnsw.dat"} <= set(first)
    works(params)
    assert _tree(tmp_path / "dense") == first  # one nmslib thread: the same graph
    index = WorksIndex(tmp_path / "dense")
    try:
        assert index.vectors.shape == (5, 384) and index.encoder == "embedded"
        ranker = WorksRanker(index, Encoder(threads=1))
        [ranked] = ranker.rank(["Reef corals lose their algae when the sea warms."], 2)
        assert ranked[0].work.title == CORAL["title"]
        assert len(index.nearest(np.asarray(index.vectors[:1], dtype=np.float32), 2)[0]) == 2
    finally:
        index.close()
