"""The language server's parts without a client: settings, which main file a chapter belongs to,
citation keys under the cursor, the incremental check (only changed paragraphs split and scored,
with the same result as a full check; a new model's scores never mixed with an old one's), where
an "ignore" directive goes in Markdown, and the subcommand's light start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from citeworth import cli
from citeworth.check.options import CheckOptions
from citeworth.check.run import check_drafts, read_draft
from citeworth.drafts import FLAGGED, SUPPRESSED
from citeworth.lsp.checker import Buffer, Checker, Project, RememberingSplitter, insert
from citeworth.lsp.features import key_at, typed_key
from citeworth.lsp.projects import main_file
from citeworth.lsp.settings import Settings, read_settings
from citeworth.text.sentences import SentenceSplitter


class CountingModel:
    """Scores a sentence by its length; counts the sentences it was asked to score."""

    def __init__(self):
        self.scored: list[str] = []

    def predict_proba(self, records):
        texts = [sample["text"] for record in records for sample in record["samples"]]
        self.scored += texts
        return np.array([min(len(text) / 100, 1.0) for text in texts])


class CountingSplitter:
    def __init__(self, splitter):
        self.splitter, self.split_texts = splitter, []

    def split(self, texts):
        texts = list(texts)
        self.split_texts += texts
        return self.splitter.split(texts)


@pytest.fixture(scope="module")
def splitter():
    return SentenceSplitter()


def test_settings_become_check_options_and_bad_values_keep_the_old_ones(tmp_path):
    raw = {"citeworth": {"model": "models/sentence", "threshold": 0.7, "topK": 5, "bib": "refs.bib",
                         "works": "data/works", "debounceMs": 100}}
    settings, problems = read_settings(raw, tmp_path, Settings())
    assert problems == [] and settings.debounce_ms == 100
    # The model stays as written (a folder or a name like study/context), resolved when loaded.
    assert settings.options == CheckOptions(Path("models/sentence"), 0.7, suggest=True, top_k=5,
                                            bibs=(tmp_path / "refs.bib",), works=tmp_path / "data" / "works")
    again, problems = read_settings({"threshold": 2, "topK": 1.5, "bib": [3], "debounceMs": -1, "model": 7,
                                     "works": 1, "colour": "red"}, tmp_path, settings)
    assert again == settings
    assert problems == ["citeworth.threshold must be between 0 and 1 (got 2)",
                        "citeworth.topK must be an integer (got 1.5)",
                        "citeworth.bib must be a file name or a list of them (got [3])",
                        "citeworth.debounceMs must be 0 or more milliseconds (got -1)",
                        "citeworth.model must be a folder name (got 7)",
                        "citeworth.works must be a folder name (got 1)",
                        "unknown setting citeworth.colour (known: model, threshold, topK, bib, works, "
                        "debounceMs)"]
    assert read_settings(None, tmp_path, settings) == (settings, [])
    assert read_settings({"model": None}, tmp_path, settings)[0].options.model is None  # back to the best
    assert read_settings({"works": None}, tmp_path, settings)[0].options.works is None  # no index


def test_a_chapter_belongs_to_the_main_file_that_includes_it(tmp_path):
    main = "\\documentclass{article}\n\\begin{document}\n\\input{parts/intro}\n\\end{document}\n"
    (tmp_path / "parts").mkdir()
    (tmp_path / "main.tex").write_text(main)
    (tmp_path / "other.tex").write_text("\\documentclass{article}\n\\begin{document}\nNo.\n\\end{document}\n")
    intro = tmp_path / "parts" / "intro.tex"
    intro.write_text("Some text.\n")
    assert main_file(intro, "Some text.\n", tmp_path) == tmp_path / "main.tex"
    assert main_file(tmp_path / "main.tex", main, tmp_path) == tmp_path / "main.tex"
    assert main_file(intro, "% !TEX root = ../other.tex\nSome text.\n", tmp_path) == tmp_path / "other.tex"
    alone = tmp_path / "parts" / "alone.tex"
    alone.write_text("Nobody inputs me.\n")
    assert main_file(alone, "Nobody inputs me.\n", tmp_path) == alone  # read whole, as check reads it
    assert main_file(intro, "Some text.\n", tmp_path / "parts") == intro  # not above the workspace root


@pytest.mark.parametrize(("line", "column", "syntax", "key"), [
    ("as in \\citep[see][p. 3]{smith2020, lee-2019}.", 26, "tex", "smith2020"),
    ("as in \\citep[see][p. 3]{smith2020, lee-2019}.", 38, "tex", "lee-2019"),
    ("as in \\citep[see][p. 3]{smith2020, lee-2019}.", 8, "tex", None),
    ("see \\textcite{Vaswani2017} and", 16, "tex", "Vaswani2017"),
    ("Coral [see @Hughes2017, p. 3; @garcia2019wheat].", 14, "md", "Hughes2017"),
    ("Coral [see @Hughes2017, p. 3; @garcia2019wheat].", 33, "md", "garcia2019wheat"),
    ("mail me at a@b.org", 12, "md", None),
])
def test_the_key_under_the_cursor(line, column, syntax, key):
    assert key_at(line, column, syntax) == key


@pytest.mark.parametrize(("before", "syntax", "typed"), [
    ("as shown by \\cite{", "tex", ""), ("as shown by \\citep[p. 2]{smith2020, Vas", "tex", "Vas"),
    ("as shown by \\cite{a} and", "tex", None), ("a \\ref{fig", "tex", None),
    ("as shown [@", "md", ""), ("as shown [see @Hug", "md", "Hug"), ("mail a@b", "md", None),
])
def test_a_key_being_typed(before, syntax, typed):
    assert typed_key(before, syntax) == typed


def test_after_an_edit_only_the_changed_paragraph_is_split_and_scored(tmp_path, splitter):
    paragraphs = [f"Paragraph {i} says that flux varies. It also says that cells divide." for i in range(5)]
    draft = tmp_path / "draft.md"
    model, counting = CountingModel(), CountingSplitter(splitter)
    remembering, known = RememberingSplitter(counting), {}

    def check(texts):
        sources = {draft.name: "\n\n".join(texts).encode()}
        drafts = [read_draft(str(draft), "md", sources)]
        return check_drafts(drafts, model, 0.3, splitter=remembering, known=known)

    check(paragraphs)
    assert len(model.scored) == 10 and len(counting.split_texts) == 5
    model.scored.clear(), counting.split_texts.clear()
    edited = [*paragraphs[:2], "Paragraph 2 now makes one claim only.", *paragraphs[3:]]
    found = check(edited)
    assert model.scored == ["Paragraph 2 now makes one claim only."]
    assert counting.split_texts == ["Paragraph 2 now makes one claim only."]
    assert len(known) == 5 and len(remembering.known) == 5  # the old paragraph 2 is forgotten
    fresh = check_drafts([read_draft(str(draft), "md", {draft.name: "\n\n".join(edited).encode()})],
                         CountingModel(), 0.3)
    assert [(s.text, s.line, s.column, s.score, s.status) for s in found] == [
        (s.text, s.line, s.column, s.score, s.status) for s in fresh]


@pytest.mark.parametrize(("text", "expected"), [
    ("Cells divide. Flux varies with heat.\n",
     "Cells divide. <!-- citeworth: ignore --> Flux varies with heat.\n"),
    ("# Title\nFlux varies with heat.\n", "# Title\n<!-- citeworth: ignore -->\n\nFlux varies with heat.\n"),
    ("- Cells divide.\n- Flux varies with heat.\n",
     "- Cells divide. <!-- citeworth: ignore -->\n- Flux varies with heat.\n"),
])
def test_a_markdown_ignore_comment_goes_where_the_reader_reads_it_as_one(tmp_path, splitter, text, expected):
    draft = tmp_path / "draft.md"
    draft.write_text(text)
    checker = Checker(encoder=None, splitter_factory=lambda: splitter)
    checker.model = CountingModel()
    project = Project(draft, "md")
    checked = checker.check(project, {draft: Buffer(text, 1)}, CheckOptions(threshold=0))
    flux = next(s for s in checked.sentences if s.text.startswith("Flux"))
    assert flux.status == FLAGGED
    place = checker.ignore_insertion(checked, flux)
    assert insert(text, place) == expected
    after = checker.check(project, {draft: Buffer(expected, 2)}, CheckOptions(threshold=0))
    before = {s.text: s.status for s in checked.sentences}
    assert {s.text: s.status for s in after.sentences} == {**before, flux.text: SUPPRESSED}


def test_the_subcommand_is_light_until_an_editor_connects(capsys):
    code = "import sys, citeworth.lsp.command; print(sorted(m for m in sys.modules if m.split('.')[0] in " \
        "('torch', 'spacy', 'pygls', 'transformers', 'sklearn')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["lsp", "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and "Code actions" in out and "citeworth lsp" in out


def test_a_new_model_scores_every_paragraph_again(tmp_path, splitter, monkeypatch):
    draft = tmp_path / "draft.md"
    draft.write_text("Flux varies with heat. Cells divide.\n\nYeast grows.\n")
    models = iter([CountingModel(), CountingModel()])
    monkeypatch.setattr("citeworth.lsp.checker.check_model",
                        lambda directory, root: (directory, next(models)))
    checker = Checker(encoder=None, splitter_factory=lambda: splitter)
    project, buffers, options = Project(draft, "md"), {draft: Buffer(draft.read_text(), 1)}, CheckOptions()
    checker.load_model(options, tmp_path)
    checker.check(project, buffers, options)
    first = checker.model
    checker.check(project, buffers, options)
    assert len(first.scored) == 3  # the second check reused every score
    checker.load_model(options, tmp_path)
    checker.check(project, buffers, options)
    assert checker.model is not first and len(checker.model.scored) == 3


def test_the_checks_warnings_come_with_a_check(tmp_path, splitter):
    draft = tmp_path / "draft.md"
    text = "<!-- citeworth: ignroe -->\n\nFlux varies with heat.\n"
    checker = Checker(encoder=None, splitter_factory=lambda: splitter)
    checker.model = CountingModel()
    checked = checker.check(Project(draft, "md"), {draft: Buffer(text, 1)}, CheckOptions())
    assert checked.warnings == [f"{draft}:1:1: unknown citeworth directive 'ignroe' (ignore, off or on)"]
    assert checker.check(Project(tmp_path / "gone.md", "md"), {}, CheckOptions()).problem == \
        f"{tmp_path / 'gone.md'}: no such file (the main file of this draft)"
