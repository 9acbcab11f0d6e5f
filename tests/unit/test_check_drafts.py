"""``citeworth check`` readers on the project's fixture drafts (tests/fixtures/check/): every flag at
the right file, line and column, nothing from maths, floats, comments or code, every sentence with a
citation ``cited``, suppressions and baselines.

A deterministic scorer stands in for the model here (any sentence mentioning "reported" scores 0.9),
so the expected flags are known; expected positions are found by searching the fixture files'
text, independently of the parser. test_check_command.py runs the same drafts with a trained model.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from citeworth.check.baseline import apply_baseline
from citeworth.check.draft import directive_warnings
from citeworth.check.markdown import markdown_citations
from citeworth.check.plain import pattern_citations
from citeworth.check.run import check_drafts, read_draft, read_drafts
from citeworth.drafts import BASELINED, CITED, FLAGGED, OK, SUPPRESSED

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "check"
MAIN = FIXTURES / "paper" / "main.tex"
METHOD = FIXTURES / "paper" / "sections" / "method.tex"
MARKDOWN = FIXTURES / "draft.md"
TEXT = FIXTURES / "notes.txt"


class ReportedScorer:
    """The model interface (``predict_proba`` over dataset-shaped records) with a known answer."""

    def __init__(self):
        self.records: list[dict] = []

    def predict_proba(self, records: list[dict]) -> np.ndarray:
        self.records += records
        return np.array([0.9 if "reported" in s["text"] else 0.1 for r in records for s in r["samples"]])


def where(path: Path, snippet: str, after: bool = False) -> tuple[str, int, int]:
    """(file, line, column) of ``snippet``'s first character (``after``: one past its last) in the
    file's text; the snippet must occur exactly once."""
    text = path.read_text(encoding="utf-8")
    assert text.count(snippet) == 1, f"{snippet!r} occurs {text.count(snippet)} times in {path}"
    offset = text.index(snippet) + (len(snippet) if after else 0)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return str(path), line, column


def span(path: Path, first: str, last: str) -> tuple:
    return (*where(path, first), *where(path, last, after=True)[1:])


def check(*paths: Path):
    drafts, problems = read_drafts([str(p) for p in paths])
    assert problems == []
    return check_drafts(drafts, ReportedScorer(), threshold=0.5)


def spans_with(found, status: str) -> set[tuple]:
    return {(s.file, s.line, s.column, s.end_line, s.end_column) for s in found if s.status == status}


def starts_with(found, status: str) -> set[tuple]:
    return {(s.file, s.line, s.column) for s in found if s.status == status}


@pytest.fixture(scope="module")
def tex():
    return check(MAIN)


@pytest.fixture(scope="module")
def markdown():
    return check(MARKDOWN)


def test_latex_flags_are_exactly_the_uncited_reported_sentences_at_their_source_span(tex):
    assert spans_with(tex, FLAGGED) == {
        span(MAIN, "Earlier studies reported", "across tissues."),
        span(MAIN, "Several groups reported", "on temperature."),
        span(MAIN, "\\method{} was reported", "on small samples."),  # starts with a macro
    }
    assert spans_with(tex, SUPPRESSED) == {
        span(MAIN, "It was reported that flux is conserved", "in plants."),  # % citeworth: ignore
        span(MAIN, "Most authors reported", "arbitrary units."),  # % citeworth: off ... on
        span(MAIN, "It was also reported", "between labs."),
    }


def test_latex_sentences_with_any_citation_command_are_cited_across_inputs(tex):
    assert starts_with(tex, CITED) == {
        where(MAIN, "Flux has been measured"),  # \citep
        where(METHOD, "We measure flux"),  # \mycite, a \newcommand around \citep
        where(METHOD, "As \\citeauthor"),  # mid-sentence, indented line
        where(METHOD, "Prior work reported"),  # \cite with two keys on the next line
        where(MAIN, "\\othercite{lee2019}"),  # \let alias of \citet, first in its sentence
        where(MAIN, "Large samples were"),  # \citet inside the sentence's footnote
    }
    # a citation is removed from what the model reads, as the dataset has it
    cited = {s.line: s.text for s in tex if s.file == str(METHOD) and s.status == CITED}
    assert cited[10] == "Prior work reported a similar integral (see)."


def test_latex_maths_floats_comments_and_verbatim_give_no_sentence(tex):
    texts = " ".join(s.text for s in tex)
    for hidden in ("preambles hold", "in a comment", "flux grows with temperature", "in verbatim",
                   "in a skipped block", "in a letter", "Measuring Flux in Living Cells"):
        assert hidden not in texts
    maths_lines = {where(METHOD, "\\begin{equation}")[1] + i for i in range(3)}
    assert not any(s.file == str(METHOD) and s.line in maths_lines for s in tex)
    # a formula stays inside its sentence, which starts before it
    assert span(METHOD, "Its value is", "for every sample.") in spans_with(tex, OK)
    assert "\\text{It was found in maths}" in texts


def test_markdown_flags_and_citations_at_their_source_span(markdown):
    assert spans_with(markdown, FLAGGED) == {
        span(MARKDOWN, "Other groups reported", "the opposite."),
        span(MARKDOWN, "A list item reported", "a citation."),
        span(MARKDOWN, "Some users reported", "(https://example.org/reported)."),
        span(MARKDOWN, "Mail <user@", "reported late."),  # after a footnote ref; escapes, entities
    }
    assert starts_with(markdown, SUPPRESSED) == {where(MARKDOWN, "It was reported that flux is conserved")}
    assert starts_with(markdown, CITED) == {
        where(MARKDOWN, "Earlier work reported"),  # [@smith2020]
        where(MARKDOWN, "A quote: numbers"),  # [12], in a block quote
        where(MARKDOWN, "A list item that cites"),  # in-text @lee2019
    }


def test_markdown_code_maths_front_matter_tables_html_and_footnotes_give_no_sentence(markdown):
    texts = " ".join(s.text for s in markdown)
    for hidden in ("in the front matter", "Results reported here", "in a fenced code block",
                   "in display maths", "in an indented code block", "in a table", "Table cell",
                   "in an HTML block", "in a footnote"):
        assert hidden not in texts
    assert "The command grep flux finds nothing." in texts and "$E = m c^2$" in texts


def test_plain_text_cites_by_the_curation_patterns():
    found = check(TEXT)
    assert starts_with(found, CITED) == {
        where(TEXT, "Earlier work reported"),  # [3]
        where(TEXT, "Smith et al."),  # et al. + (2019)
        where(TEXT, "Others reported"),  # (Jones and Lee, 2018)
    }
    assert starts_with(found, OK) == {where(TEXT, "We measured it again."), where(TEXT, "Our data are new.")}
    first = next(s for s in found if s.status == CITED)
    assert first.text == "Earlier work reported that flux varies across tissues."  # [3] removed


def test_citation_patterns_of_markdown_and_text():
    text = "As [@doe99, p. 3; @roe] and @lee2019 show [12], [3-5] (Smith et al., 2010); mail a@b.org `@code`."
    found = [text[a:b] for a, b in markdown_citations(text, [(text.index("`"), len(text) - 1)])]
    assert found == ["[@doe99, p. 3; @roe]", "@lee2019", "[12]", "[3-5]", "(Smith et al., 2010)"]
    assert [text[a:b] for a, b in pattern_citations(text)] == ["[12]", "[3-5]", "(Smith et al., 2010)"]


def test_code_and_maths_never_count_as_citations(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("Index `a[3]` was reported in 2020. Also $f(x) = [1]$ was reported (Smith, 2019).\n")
    found = check_drafts([read_draft(str(path))], ReportedScorer(), 0.5)
    assert [s.status for s in found] == [FLAGGED, CITED]


def test_the_context_model_gets_each_paragraph_whole(tex):
    scorer = ReportedScorer()
    drafts, _ = read_drafts([str(MAIN)])
    check_drafts(drafts, scorer, 0.5)
    intro = next(r for r in scorer.records if r["samples"][0]["text"].startswith("Earlier studies"))
    assert [s["text"] for s in intro["samples"]] == [
        "Earlier studies reported that flux varies strongly across tissues.",
        "Flux has been measured in yeast and was reported stable there.",
        "Cells divide.",
        "Several groups reported that flux depends on temperature.",
    ]


def test_a_language_server_is_told_of_each_file_once_scored_the_open_files_first(tex):
    """What lets an editor show a file's flags before the rest of its draft is scored."""
    drafts, _ = read_drafts([str(MAIN)])
    scorer, told = ReportedScorer(), []

    def on_file(file: str, found: list) -> None:
        assert all(s.file == file and s.score is not None for s in found)
        told.append((file, len(scorer.records), [(s.line, s.column, s.status) for s in found]))

    found = check_drafts(drafts, scorer, 0.5, on_file=on_file, first={str(METHOD)})
    assert [file for file, _, _ in told] == [str(METHOD), str(MAIN)]  # then in reading order
    assert told[0][1] < len(scorer.records)  # the open file was told of before the rest was scored
    def statuses(sentences) -> list:
        return sorted((s.file, s.line, s.column, s.status) for s in sentences)

    assert sorted((f, *s) for f, _, sentences in told for s in sentences) == statuses(found) == statuses(tex)


def test_a_paragraph_across_an_input_tells_each_file_of_its_own_sentences(tmp_path):
    """No blank line around ``\\input``: one paragraph, two files, each told of its own sentences
    (an editor places them on that file's lines)."""
    (tmp_path / "main.tex").write_text("\\begin{document}\nYeast cells divide.\n\\input{chapter}\n"
                                       "\\end{document}\n")
    (tmp_path / "chapter.tex").write_text("Flux varies with temperature.\nPlants grow.\n")
    drafts, _ = read_drafts([str(tmp_path / "main.tex")])
    told = {}
    check_drafts(drafts, ReportedScorer(), 0.5, first={str(tmp_path / "chapter.tex")},
                 on_file=lambda file, found: told.setdefault(file, [(s.line, s.text) for s in found]))
    assert told == {
        str(tmp_path / "main.tex"): [(2, "Yeast cells divide.")],
        str(tmp_path / "chapter.tex"): [(1, "Flux varies with temperature."), (2, "Plants grow.")]}


def test_a_chapter_given_beside_its_main_file_is_checked_once_and_alone_as_a_fragment():
    drafts, problems = read_drafts([str(METHOD), str(MAIN), str(MAIN)])
    assert problems == [] and [d.name for d in drafts] == [str(MAIN)]
    alone = read_draft(str(METHOD))  # no \begin{document}: read whole
    found = check_drafts([alone], ReportedScorer(), 0.5)
    assert where(METHOD, "Our own measurements") in starts_with(found, OK)
    assert all(s.file == str(METHOD) for s in found)


def test_directives_that_are_not_known_are_reported_and_the_rest_apply(tmp_path):
    path = tmp_path / "draft.tex"
    path.write_text("\\documentclass{article}\n\\begin{document}\n% citeworth: disable\n"
                    "It was reported that flux is large.\n% citeworth:ignore\nFlux was reported again.\n"
                    "\\end{document}\n")
    draft = read_draft(str(path))
    assert directive_warnings(draft) == [
        f"{path}:3:1: unknown citeworth directive 'disable' (ignore, off or on)"]
    found = check_drafts([draft], ReportedScorer(), 0.5)
    assert [s.status for s in found] == [FLAGGED, SUPPRESSED]


def test_missing_inputs_are_warned_about(tmp_path):
    (tmp_path / "main.tex").write_text("\\documentclass{article}\n\\begin{document}\n\\input{nothere}\n"
                                       "Text here.\n\\end{document}\n")
    draft = read_draft(str(tmp_path / "main.tex"))
    assert draft.warnings == [f"{tmp_path / 'main.tex'}: \\input/\\include of 'nothere': no such file "
                              "(its text is not checked)"]


def test_a_baseline_silences_known_flags_by_text_wherever_they_move(tex):
    flagged = [s for s in tex if s.status == FLAGGED]
    known = Counter(s.fingerprint for s in flagged[:2])
    moved = check(MAIN)  # the same sentences, e.g. after lines moved (the fingerprint has no position)
    for sentence in moved:
        sentence.line += 100
    apply_baseline(moved, known)
    assert Counter(s.status for s in moved if s.fingerprint in known) == {BASELINED: 2}
    assert sum(s.status == FLAGGED for s in moved) == len(flagged) - 2


def test_a_baseline_entry_accepts_one_flag_only():
    first, second = check(MAIN)[:2]
    second.text, second.status, first.status = first.text, FLAGGED, FLAGGED  # the same sentence twice
    apply_baseline([first, second], Counter({first.fingerprint: 1}))
    assert (first.status, second.status) == (BASELINED, FLAGGED)
