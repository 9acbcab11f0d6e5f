"""The server's work: checking drafts and ranking their bibliographies, with what stays loaded.

Loaded once per server: the model, the sentence splitter (spaCy) and the suggestions' encoder
(its own process, with its vectors in memory and in the user's vector cache, so a bibliography
is embedded once). Kept per draft between checks: the sentence bounds of each paragraph and the
scores of each paragraph, so that after an edit only the paragraphs whose text changed are split
and scored. The draft itself is read whole on every check, through the check's own readers: the
meaning of a LaTeX paragraph hangs on the macros and environments around it, so the one parser
reads the project again (about 0.1 s for 300 sentences, benchmarks/results/lsp.json).

Everything here runs on the server's one worker thread (``server.py`` keeps the protocol on its
event loop); the readers, the rules, the scoring and the ranker are ``citeworth check``'s own.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from citeworth.check.draft import directive_warnings, sentences
from citeworth.check.latex import IGNORE_COMMENT as TEX_IGNORE
from citeworth.check.markdown import IGNORE_COMMENT as MD_IGNORE
from citeworth.check.options import CheckOptions
from citeworth.check.run import READ_ERRORS, check_drafts, check_model, read_draft, read_problem
from citeworth.core import collector
from citeworth.drafts import Draft, Insertion, Sentence, Suggested
from citeworth.lsp.projects import disk_files, draft_sources
from citeworth.lsp.settings import TORCH_THREADS
from citeworth.sources.latex.project import decode

if TYPE_CHECKING:  # the suggestions' modules load with the first suggestion, not with the server
    from citeworth.suggest.candidates import Candidate
    from citeworth.suggest.draft import DraftRanker, WorkSuggester
    from citeworth.suggest.works import WorksRanker

COMPLETION_WORKS = 10  # works of the cited-works index a completion lists after the draft's entries


class RememberingSplitter:
    """A sentence splitter that splits each distinct paragraph text once, keeping only the texts
    of the last call: after an edit, only the changed paragraphs are split again."""

    def __init__(self, splitter):
        self.splitter = splitter
        self.known: dict[str, list] = {}

    def split(self, texts: Iterable[str]) -> Iterator[list]:
        texts = list(texts)
        todo = list(dict.fromkeys(t for t in texts if t not in self.known))
        self.known.update(zip(todo, self.splitter.split(todo), strict=True))
        self.known = {text: self.known[text] for text in texts}
        return iter([self.known[text] for text in texts])

    def trial(self) -> RememberingSplitter:
        """A splitter for a draft that is only tried (an edit not made): it starts from what this
        one knows and keeps what it learns to itself, so this one's memory stays the real draft's."""
        trial = RememberingSplitter(self.splitter)
        trial.known = dict(self.known)
        return trial


@dataclass(eq=False)  # one object per draft: compared by identity
class Project:
    """A draft the server checks: a LaTeX main file with what it includes, or a Markdown file."""

    main: Path
    syntax: str  # tex or md
    disk: dict[str, bytes] | None = None  # its files on disk, read again after saves and file events
    splitter: RememberingSplitter | None = None
    scores: dict = field(default_factory=dict)  # paragraph texts -> scores, of the last check
    scored_with: object = None  # the model that made ``scores`` (another one: none hold)

    def holds(self, path: Path) -> bool:
        """Whether the file ``path`` is part of this draft: the main file, or for LaTeX any file in
        its folder tree (what it includes may change with any edit)."""
        return path == self.main or (self.syntax == "tex" and path.is_relative_to(self.main.parent))


@dataclass
class Checked:
    """One check of a project: its sentences and the texts they were found in."""

    project: Project
    options: CheckOptions
    sentences: list[Sentence] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # file -> its text as checked
    versions: dict[str, int | None] = field(default_factory=dict)  # file -> the buffer version checked
    sources: dict[str, bytes] = field(default_factory=dict)  # the draft's files, relative to its folder
    draft: Draft | None = None
    problem: str | None = None  # why it could not be read
    warnings: list[str] = field(default_factory=list)
    ranker: DraftRanker | None = None  # built when first asked for
    works: WorkSuggester | None = None  # with a cited-works index, built with ``ranker``
    bibliography_warnings: list[str] = field(default_factory=list)
    published_early: set[str] = field(default_factory=set)  # files whose flags went out as they came
    _lines: dict[str, list[str]] = field(default_factory=dict)  # file -> its lines, split once

    @property
    def files(self) -> list[str]:
        return list(self.texts)

    def lines(self, file: str) -> list[str]:
        if file not in self._lines:
            self._lines[file] = self.texts.get(file, "").splitlines()
        return self._lines[file]

    def at(self, file: str, line: int, column: int) -> Sentence | None:
        """The sentence of ``file`` that contains the 1-based ``line``:``column`` (its end included)."""
        position = (line, column)
        return next((s for s in self.sentences if s.file == file
                     and (s.line, s.column) <= position <= (s.end_line, s.end_column)), None)

    def before(self, file: str, line: int, column: int) -> Sentence | None:
        """The sentence of ``file`` that contains ``line``:``column``, else the last one before it."""
        position = (line, column)
        found = [s for s in self.sentences if s.file == file and (s.line, s.column) <= position]
        return self.at(file, line, column) or (found[-1] if found else None)


@dataclass(frozen=True)
class Buffer:
    text: str
    version: int | None


class Checker:
    def __init__(self, encoder, splitter_factory=None):
        self.encoder = encoder
        self._splitter_factory = splitter_factory
        self._splitter = None
        self.model = None
        self.model_dir: Path | None = None
        self.works: WorksRanker | None = None  # the cited-works index, opened once per server
        self.works_dir: Path | None = None

    def load_model(self, options: CheckOptions, root: Path) -> str | None:
        """Load the model ``options`` name (else the best of the project at ``root``); the
        message saying why not, if it cannot be loaded."""
        try:
            self.model_dir, self.model = check_model(options.model, root)
        except (FileNotFoundError, ValueError) as exc:
            self.model_dir, self.model = None, None
            return str(exc)
        if "torch" in sys.modules:  # a torch model: see TORCH_THREADS
            sys.modules["torch"].set_num_threads(TORCH_THREADS)
        return None

    def load_works(self, folder: Path | None) -> tuple[bool, str | None]:
        """Open the cited-works index ``folder`` (None: use none) unless it is the one open: (whether
        it was opened now, the message saying why it cannot be used)."""
        if folder == self.works_dir:
            return False, None
        if self.works is not None:
            self.works.index.close()
        self.works, self.works_dir = None, None
        if folder is None:
            return False, None
        from citeworth.suggest.works import WorksIndex, WorksIndexError, WorksRanker

        try:
            self.works, self.works_dir = WorksRanker(WorksIndex(folder), self.encoder), folder
        except WorksIndexError as exc:
            return False, str(exc)
        return True, None

    def check(self, project: Project, buffers: Mapping[Path, Buffer], options: CheckOptions,
              on_file: Callable[[Checked, str, list[Sentence]], None] | None = None) -> Checked:
        """Read ``project`` (its open ``buffers`` over its files on disk), score its sentences;
        ``on_file(checked, file, sentences)`` is told of each file's sentences once they are scored,
        the open files' first."""
        checked = Checked(project, options)
        if project.disk is None:
            project.disk = disk_files(project.main, project.syntax)
        texts = {path: buffer.text for path, buffer in buffers.items()}
        checked.sources = draft_sources(project.main, project.syntax, project.disk, texts)
        if project.main.name not in checked.sources:
            checked.problem = f"{project.main}: no such file (the main file of this draft)"
            return checked
        if project.splitter is None:
            project.splitter = RememberingSplitter(self.splitter())
        if project.scored_with is not self.model:
            project.scores.clear()
            project.scored_with = self.model
        with collector.streaming():  # the loaded model and spaCy are not walked by every collection
            try:
                draft = read_draft(str(project.main), project.syntax, checked.sources)
            except READ_ERRORS as exc:
                checked.problem = read_problem(str(project.main), exc)
                return checked
            for file in draft.files or [draft.name]:
                buffer = buffers.get(Path(file))
                relative = Path(file).relative_to(project.main.parent).as_posix()
                checked.texts[file] = buffer.text if buffer else decode(checked.sources.get(relative, b""))
                checked.versions[file] = buffer.version if buffer else None
            told = None if on_file is None else functools.partial(on_file, checked)
            checked.sentences = check_drafts([draft], self.model, options.threshold,
                                             splitter=project.splitter, known=project.scores,
                                             on_file=told, first={str(path) for path in buffers})
        checked.draft, checked.warnings = draft, draft.warnings + directive_warnings(draft)
        self._encoder_loading()
        return checked

    def _encoder_loading(self) -> None:
        """Start loading the suggestions' encoder (its own process), once: after the first check,
        so that on a small machine it does not slow the first diagnostics down."""
        if self.encoder is not None:
            self.encoder.load_in_background()

    def splitter(self):
        if self._splitter is None:
            from citeworth.text.sentences import SentenceSplitter

            self._splitter = (self._splitter_factory or SentenceSplitter)()
        return self._splitter

    def ranker(self, checked: Checked) -> DraftRanker:
        """The ranker of ``checked``'s own bibliography (built once per check)."""
        if checked.ranker is None:
            from citeworth.suggest.draft import DraftRanker, WorkSuggester, draft_bib, draft_bibliography

            self._encoder_loading()
            own, checked.bibliography_warnings = draft_bibliography(
                checked.draft, checked.project.syntax, list(checked.options.bibs), checked.sources)
            checked.ranker = DraftRanker(checked.sentences, own, (), self.encoder)
            if self.works is not None:
                bib = draft_bib(checked.draft, checked.project.syntax, list(checked.options.bibs),
                                checked.sources)
                checked.works = WorkSuggester(self.works, own, bib, checked.draft, checked.sentences)
        return checked.ranker

    def suggestions(self, checked: Checked, sentence: Sentence) -> list[Suggested]:
        """The top k entries for a flagged ``sentence``, each with where its citation goes, then
        with a cited-works index its top k works."""
        copy = dataclasses.replace(sentence, suggestions=[], cited_ranks=[])
        ranker, syntax = self.ranker(checked), checked.project.syntax
        ranker.fill([copy], checked.options.top_k, syntax, checked.lines)
        if checked.works is not None:
            checked.works.fill([copy], checked.options.top_k, syntax, checked.lines)
        return copy.suggestions

    def work_ranking(self, checked: Checked, text: str) -> list[Suggested]:
        """The works of the cited-works index for the sentence ``text`` (none without an index)."""
        self.ranker(checked)
        return checked.works.ranked(text, COMPLETION_WORKS) if checked.works is not None else []

    def ranking(self, checked: Checked, text: str) -> list[Candidate]:
        """The draft's own entries, best first for the sentence ``text``."""
        return self.ranker(checked).own_order(text)

    def ignore_insertion(self, checked: Checked, sentence: Sentence) -> Insertion | None:
        """Where a directive silencing ``sentence`` goes: LaTeX, a comment line just before it;
        Markdown, an HTML comment before it in its paragraph, else at the end of the line before,
        else on a line of its own, the first place the Markdown reader then reads as silencing
        exactly this sentence (a comment opening a line can start an HTML block instead)."""
        if checked.project.syntax == "tex":
            return Insertion(sentence.line, sentence.column, TEX_IGNORE + "\n")
        lines = checked.lines(sentence.file)
        places = [Insertion(sentence.line, sentence.column, MD_IGNORE + " ")]
        if sentence.line > 1:
            places.append(Insertion(sentence.line - 1, len(lines[sentence.line - 2]) + 1, " " + MD_IGNORE))
        places.append(Insertion(sentence.line, 1, MD_IGNORE + "\n\n"))
        return next((place for place in places if self._silences(checked, sentence, place)), None)

    def _silences(self, checked: Checked, sentence: Sentence, place: Insertion) -> bool:
        """Whether the draft with ``place`` inserted has the same sentences, ``sentence`` now
        suppressed and no other newly so."""
        main = checked.project.main
        text = insert(checked.texts[sentence.file], place)
        try:
            draft = read_draft(str(main), "md", {main.name: text.encode()})
        except READ_ERRORS:
            return False
        splitter = checked.project.splitter.trial() if checked.project.splitter else self.splitter()
        after = [s for paragraph in sentences([draft], splitter) for s in paragraph]
        before = checked.sentences
        if [s.text for s in after] != [s.text for s in before]:
            return False
        pairs = zip(after, before, strict=True)
        return all(new.suppressed == (old.suppressed or old is sentence) for new, old in pairs)


def insert(text: str, place: Insertion) -> str:
    """``text`` with ``place.text`` inserted at its 1-based line and column (code points)."""
    lines = text.split("\n")
    line = lines[place.line - 1]
    lines[place.line - 1] = line[:place.column - 1] + place.text + line[place.column - 1:]
    return "\n".join(lines)
