"""``citeworth check --suggest`` and the ranking library behind it (``citeworth/suggest``): BM25
against a hand computation, the fusion, author surnames, printed references, a draft's bibliography
with bad input (a missing .bib, an unparsable block, duplicate keys, no title, LaTeX in titles, a
50,000-entry .bib), and the check command end to end on a fixture draft written here (GNU, JSONL
and SARIF with fixes validated against the SARIF 2.1.0 schema)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from test_check_command import FIXTURES, model_dir, run  # noqa: F401 (model_dir: a fixture)

from citeworth.core.paper import BibEntry, CitationSpan, Paper, Paragraph
from citeworth.corpora.paper_index import PaperIndex
from citeworth.suggest.authors import AuthorIndex
from citeworth.suggest.bm25 import BM25, tokens
from citeworth.suggest.candidates import draft_candidates, from_raw
from citeworth.suggest.corpus import corpus_candidates
from citeworth.suggest.dense import Encoder
from citeworth.suggest.ranker import Ranker, fuse, rrf
from citeworth.suggest.vector_cache import VectorCache

PAPER = FIXTURES / "suggest" / "paper"
MARKDOWN = FIXTURES / "suggest" / "markdown"


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path, monkeypatch):
    """check --suggest keeps vectors in the user's cache folder: each test gets its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_bm25_scores_match_a_hand_computation():
    docs = ["coral bleaching coral", "wheat photosynthesis", "coral reefs and wheat fields"]
    scores = BM25(docs).scores("coral coral bleaching")
    lengths = [3, 2, 4]  # 'and' is a stop word; 'reefs' -> 'reef', 'fields' -> 'field'
    average = sum(lengths) / 3

    def term(tf, df, length):
        idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * length / average))  # Lucene's: no (k1 + 1)

    expected = [term(2, 2, 3) + term(1, 1, 3), 0.0, term(1, 2, 4)]
    assert np.allclose(scores, expected)
    assert tokens("Networks of the models, a class") == ["network", "model", "class"]
    assert not BM25([]).scores("anything").size
    assert BM25(["the and", "of a"]).scores("coral").tolist() == [0.0, 0.0]  # no word to index


def test_rrf_ranks_only_what_a_signal_scores_and_authors_dominate_the_fusion():
    scores = np.array([[0.5, 0.0, 2.0, np.nan]])
    assert np.allclose(rrf(scores), [[1 / 62, 0, 1 / 61, 0]])
    fused = fuse({"bm25": scores, "authors": np.array([[0, 1.0, 0, 0]])})
    assert np.argmax(fused[0]) == 1


def test_author_surnames_in_the_sentence_find_their_entries():
    index = AuthorIndex([("Smith", "Jones"), ("Müller",), ("van der Berg",), ("Long",)],
                        [2019, 2018, 2020, 2001])
    scores = index.scores("As Smith et al. (2019) and Muller argued, and as Berg did, the effect is long.")
    assert scores.tolist() == [1.25, 1.0, 1.0, 0.0]  # 'long' is not capitalised: not a name
    assert index.scores("Jones found it.").tolist() == [0.5, 0, 0, 0]


@pytest.mark.parametrize(("raw", "authors", "title", "year"), [
    ("T. Alazard, O. Lazar, and Q. H. Nguyen. On the dynamics of the roots of polynomials under "
     "differentiation. Journal de Mathématiques Pures et Appliquées, 162:1–22, 2022.",
     ("Alazard", "Lazar", "Nguyen"),
     "On the dynamics of the roots of polynomials under differentiation", 2022),
    ("S.-S. Byun, J. Lee, and T. R. Reddy. Zeros of random polynomials. Trans. AMS, 2022.",
     ("Byun", "Lee", "Reddy"), "Zeros of random polynomials", 2022),
    ("Vaswani, A., Shazeer, N.: Attention is all you need. In: NeurIPS (2017)",
     ("Vaswani", "Shazeer"), "Attention is all you need", 2017),
])
def test_printed_references_give_surnames_title_and_year(raw, authors, title, year):
    candidate = from_raw("k", raw)
    assert (candidate.authors, candidate.title, candidate.year) == (authors, title, year)


def test_a_drafts_bib_is_read_whole_with_warnings_for_bad_input():
    candidates, warnings = draft_candidates(PAPER / "main.tex")
    by_key = {c.key: c for c in candidates}
    # spelled as in the .bib
    assert set(by_key) == {"Vaswani2017", "garcia2019wheat", "Hughes2017", "notitle2020"}
    assert by_key["garcia2019wheat"].title == "Elevated CO$_2$ and the photosynthetic efficiency of Wheat"
    assert by_key["garcia2019wheat"].authors == ("García", "Okafor")
    assert "photosynthesis" in by_key["garcia2019wheat"].text  # keywords are ranked on
    assert by_key["Hughes2017"].title.startswith("Global warming")  # the first of a duplicate key
    assert by_key["notitle2020"].title is None and by_key["notitle2020"].label
    assert any("'missing.bib', which does not exist" in w for w in warnings)
    assert any("1 .bib block(s) could not be parsed" in w for w in warnings)
    assert any("1 duplicate .bib key(s)" in w for w in warnings)


def test_without_a_bib_the_thebibliography_entries_are_the_candidates(tmp_path):
    main = tmp_path / "main.tex"
    main.write_text("\\begin{document}Text.\n\\begin{thebibliography}{9}\n"
                    "\\bibitem{smith10} A.~Smith. \\newblock Flux in cells. \\newblock J. Cells, 2010.\n"
                    "\\end{thebibliography}\\end{document}\n")
    [candidate], warnings = draft_candidates(main)
    assert (candidate.key, candidate.title, candidate.authors, warnings) == ("smith10", "Flux in cells",
                                                                          ("Smith",), [])
    main.write_text("\\begin{document}No bibliography.\\end{document}\n")
    assert draft_candidates(main)[1] == [
        f"{main}: no bibliography entries (.bib, .bbl or thebibliography): nothing to suggest from"]


def test_a_50000_entry_bib_is_ranked_with_the_dense_signal_on_a_pool(tmp_path):
    entries = [f"@article{{key{i},\n  title = {{Study {i} of topic {i % 97} in the \\\"{{o}}cean}},\n"
               f"  author = {{Author{i % 5000}, A. and Other, B.}},\n  year = {{2000}}\n}}\n"
               for i in range(50_000)]
    entries[31_337] = ("@article{Zhang2021,\n  title = {Sea urchin grazing on kelp forests},\n"
                       "  author = {Zhang, Wei},\n  year = {2021}\n}\n")
    (tmp_path / "refs.bib").write_text("".join(entries))
    (tmp_path / "main.tex").write_text("\\begin{document}x\\bibliography{refs}\\end{document}\n")
    candidates, warnings = draft_candidates(tmp_path / "main.tex")
    assert len(candidates) == 50_000 and warnings == []
    assert candidates[0].title == "Study 0 of topic 0 in the öcean"
    [ranking] = Ranker(candidates, Encoder()).rank(["Kelp forests shrink where urchins graze."], k=3)
    assert candidates[ranking[0].index].key == "Zhang2021"


def test_corpus_candidates_carry_the_sentences_other_papers_cite_them_in(tmp_path):
    cited = Paper("p1", "Kelp forest decline", (), [], abstract="Urchins graze kelp.", source="s", ids={})
    text = "Kelp declines where urchins graze {{cite:b1}}. Other text follows."
    span = CitationSpan(34, 45, "{{cite:b1}}", "b1")
    citing = Paper("p2", "A citing paper", (), [Paragraph(text, "Intro", (span,))],
                   {"b1": BibEntry("b1", title="Kelp forest decline")}, source="s", ids={})
    index = PaperIndex(tmp_path / "index.sqlite", keep_text=True)
    index.add(cited)
    index.add(citing)
    index.db.commit()
    index.close()
    candidates = corpus_candidates(tmp_path / "index.sqlite")
    assert [c.key for c in candidates] == ["s:p1", "s:p2"]
    assert candidates[0].contexts == ["Kelp declines where urchins graze ."]
    assert candidates[0].text == "Kelp forest decline. Urchins graze kelp."


def test_check_suggest_ranks_the_obvious_entry_first_and_writes_fixes(model_dir, capsys, tmp_path):  # noqa: F811
    paper = tmp_path / "paper"
    shutil.copytree(PAPER, paper)
    main = str(paper / "main.tex")
    code, out, err = run(capsys, main, "--model", str(model_dir), "--threshold", "0", "--suggest",
                         "--format", "jsonl")
    rows = {row["text"]: row for row in map(json.loads, out.splitlines())}
    garcia = rows["García and Okafor showed that photosynthetic efficiency of wheat rises under elevated "
                  "carbon dioxide."]
    assert garcia["suggestions"][0]["key"] == "garcia2019wheat" and len(garcia["suggestions"]) == 3
    transformer = rows["Transformers replaced recurrence with self-attention for machine translation."]
    assert transformer["suggestions"][0]["key"] == "Vaswani2017"
    coral = rows["Coral reefs bleach when ocean temperatures stay high."]
    assert coral["status"] == "cited" and coral["cited_ranks"] == [
        {"key": "Hughes2017", "rank": 1, "of": 4}]
    assert "'missing.bib', which does not exist" in err
    code, out, _ = run(capsys, main, "--model", str(model_dir), "--threshold", "0", "--suggest",
                       "--top-k", "2")
    [garcia_line] = [line for line in out.splitlines() if ":6:1: warning:" in line]
    assert re.search(r" \[CW001\] suggest: \\cite\{garcia2019wheat\}, \\cite\{\w+\}$", garcia_line)
    sarif_file = tmp_path / "check.sarif"
    run(capsys, main, "--model", str(model_dir), "--threshold", "0", "--suggest", "--format", "sarif",
        "-o", str(sarif_file))
    log = json.loads(sarif_file.read_text())
    schema = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    [result] = [r for r in log["runs"][0]["results"] if "García" in r["message"]["text"]]
    fix = result["fixes"][0]
    assert fix["description"]["text"].startswith("Cite garcia2019wheat")
    [change] = fix["artifactChanges"]
    [replacement] = change["replacements"]
    region, inserted = replacement["deletedRegion"], replacement["insertedContent"]["text"]
    lines = Path(main).read_text().splitlines()
    line = lines[region["startLine"] - 1]
    column = region["startColumn"] - 1
    assert line[:column] + inserted + line[column:] == (
        "Garc\\'ia and Okafor showed that photosynthetic efficiency of wheat rises under elevated carbon "
        "dioxide~\\cite{garcia2019wheat}.")


def test_corpus_usage_errors_exit_2_with_a_clear_message(model_dir, capsys, tmp_path):  # noqa: F811
    main = str(PAPER / "main.tex")
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, main, "--model", str(model_dir), "--corpus", str(tmp_path / "x.sqlite"))
    assert exit_info.value.code == 2 and "--corpus needs --suggest" in capsys.readouterr().err
    code, _, err = run(capsys, main, "--model", str(model_dir), "--suggest", "--corpus",
                       str(tmp_path / "x.sqlite"))
    assert code == 2 and "no such paper index (write one with `citeworth suggest-index`)" in err
    (tmp_path / "bad.sqlite").write_text("not a database")
    code, _, err = run(capsys, main, "--model", str(model_dir), "--suggest", "--corpus",
                       str(tmp_path / "bad.sqlite"))
    assert code == 2 and "not a paper index" in err


def test_markdown_draft_suggests_from_its_front_matter_bibliography(model_dir, capsys, tmp_path):  # noqa: F811
    shutil.copytree(MARKDOWN, tmp_path / "md")
    draft = tmp_path / "md" / "draft.md"
    code, out, err = run(capsys, str(draft), "--model", str(model_dir), "--threshold", "0", "--suggest",
                         "--format", "jsonl")
    rows = {row["text"]: row for row in map(json.loads, out.splitlines())}
    garcia = rows["García and Okafor showed that photosynthetic efficiency of wheat rises under elevated "
                  "carbon dioxide."]
    assert garcia["suggestions"][0] == {"key": "garcia2019wheat", "source": "bibliography",
                                        "score": garcia["suggestions"][0]["score"],
                                        "title": "Elevated CO$_2$ and the photosynthetic efficiency of Wheat"}
    coral = rows["Coral reefs bleach when ocean temperatures stay high."]  # [see @Hughes2017, p. 3; ...]
    assert [r["key"] for r in coral["cited_ranks"]] == ["Hughes2017", "garcia2019wheat"]
    sarif_file = tmp_path / "check.sarif"
    run(capsys, str(draft), "--model", str(model_dir), "--threshold", "0", "--suggest", "--format", "sarif",
        "-o", str(sarif_file))
    log = json.loads(sarif_file.read_text())
    schema = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    [result] = [r for r in log["runs"][0]["results"] if "García" in r["message"]["text"]]
    [replacement] = result["fixes"][0]["artifactChanges"][0]["replacements"]
    region, inserted = replacement["deletedRegion"], replacement["insertedContent"]["text"]
    line = draft.read_text().splitlines()[region["startLine"] - 1]
    column = region["startColumn"] - 1
    assert line[:column] + inserted + line[column:] == (
        "García and Okafor showed that photosynthetic efficiency of wheat rises under elevated carbon "
        "dioxide [@garcia2019wheat].")


def test_bib_option_serves_drafts_that_name_no_bibliography(model_dir, capsys, tmp_path):  # noqa: F811
    notes = tmp_path / "notes.txt"
    notes.write_text("Transformers replaced recurrence with self-attention for machine translation.\n")
    code, out, err = run(capsys, str(notes), "--model", str(model_dir), "--threshold", "0", "--suggest",
                         "--format", "jsonl", "--bib", str(MARKDOWN / "refs.bib"), "--bib",
                         str(tmp_path / "gone.bib"))
    [row] = map(json.loads, out.splitlines())
    assert row["suggestions"][0]["key"] == "Vaswani2017"
    assert "cannot read bibliography" in err and "gone.bib" in err
    broken = tmp_path / "broken.md"
    broken.write_text("---\nbibliography: [unclosed\n---\n\nKelp forests shrink where urchins graze.\n")
    code, out, err = run(capsys, str(broken), "--model", str(model_dir), "--threshold", "0", "--suggest")
    assert "front matter is not YAML" in err


def test_vector_cache_keeps_the_most_recently_used_vectors_of_one_encoder(tmp_path):
    cache = VectorCache(tmp_path, "digest-a", limit=2)
    cache.put({"one": np.ones(3, np.float32), "two": np.full(3, 2, np.float32)})
    assert VectorCache(tmp_path, "digest-b").get(["one", "two"]) == {}  # another encoder: nothing
    assert np.array_equal(cache.get(["two", "none"])["two"], np.full(3, 2))  # "two" used last
    cache.put({"three": np.zeros(3, np.float32)})
    assert sorted(VectorCache(tmp_path, "digest-a").get(["one", "two", "three"])) == ["three", "two"]


def test_vector_cache_that_cannot_be_written_costs_only_speed(tmp_path, caplog):
    (tmp_path / "file").write_text("a file where the folder should be")
    cache = VectorCache(tmp_path / "file", "digest")
    cache.put({"one": np.ones(3, np.float32)})
    assert cache.get(["one"]) == {} and "vector cache" in caplog.text


def test_encoder_reuses_vectors_of_an_earlier_run(tmp_path, monkeypatch):
    texts = ["Kelp forests shrink where urchins graze.", "Attention is all you need."]
    first = Encoder(cache_dir=tmp_path).encode(texts)
    monkeypatch.setattr(Encoder, "_embed", lambda self, missing: pytest.fail(f"embedded {missing}"))
    assert np.array_equal(Encoder(cache_dir=tmp_path).encode(texts[::-1]), first[::-1])


def test_encoder_process_embeds_as_the_encoder_does_and_dies_when_closed():
    texts = ["Kelp forests shrink where urchins graze.", "Attention is all you need."]
    background = Encoder()
    background.load_in_background()
    process = background._process._process
    try:
        assert np.allclose(background.encode(texts), Encoder().encode(texts), atol=1e-6)
    finally:
        background.close()
    assert not process.is_alive() and background._process is None


def test_encoder_process_raises_the_load_error_where_vectors_are_asked_for(tmp_path):
    from citeworth.models.encoders import EncoderUnavailable

    background = Encoder(str(tmp_path / "no-such-encoder"))
    background.load_in_background()
    try:
        with pytest.raises(EncoderUnavailable, match="does not exist"):
            background.encode(["A sentence."])
    finally:
        background.close()
