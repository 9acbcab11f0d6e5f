"""``citeworth check --suggest``: suggestions for a checked draft's sentences.

For each reported flag, the top k candidates (the draft's own bibliography, then with ``--corpus``
the corpus' papers), each with the place a citation would go: before the sentence's final
punctuation, as ``~\\cite{key}`` (LaTeX) or `` [@key]`` (Markdown). With ``--works`` the top k
works of a cited-works index follow, those the draft's bibliography does not have yet, each with
the BibTeX entry citing it adds to the draft's ``.bib`` (``WorkSuggester``). For each cited sentence, the
rank the ranker gives each key it cites among the bibliography. A low rank is reported, never
called a sign of a wrong citation: on the benchmark (benchmarks/results/suggest.json,
``low_rank``) 11% of correct citations fall in their bibliography's last 10% and 8% in its last
5%, more than a key placed at random would, so no threshold separates right from wrong.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from citeworth.drafts import (
    BIBLIOGRAPHY,
    CITED,
    CORPUS,
    FLAGGED,
    WORKS,
    CitedRank,
    Draft,
    Insertion,
    NewEntry,
    Sentence,
    Suggested,
)
from citeworth.sources.latex import project_files
from citeworth.sources.latex.bibliography import read_bib
from citeworth.sources.latex.project import decode, tex_texts
from citeworth.suggest import encoder_available
from citeworth.suggest.bibtex import bibtex_entry, entry_key
from citeworth.suggest.candidates import (
    Candidate,
    bib_candidates,
    draft_candidates,
    front_matter_bibs,
    project_bib_files,
)
from citeworth.suggest.dense import Encoder
from citeworth.suggest.ranker import Ranker, fuse, order
from citeworth.suggest.works import NEARBY, Query, Ranked, WorksRanker

CITE_TEXT = {"tex": "~\\cite{{{key}}}", "md": " [@{key}]"}
_FINAL_PUNCTUATION = ".!?;:"
Lines = Callable[[str], list[str]]  # a file's path -> its lines (from disk, or an editor's buffer)


def suggest(drafts: Sequence[tuple[Draft, str]], found: Sequence[Sentence], k: int,
            corpus: Sequence[Candidate] = (), encoder: Encoder | None = None,
            bibs: Sequence[Path] = (), works: WorksRanker | None = None) -> list[str]:
    """Fill ``suggestions`` and ``cited_ranks`` of ``found``'s sentences; ``drafts``: each draft
    with its syntax (tex, md, txt); ``bibs``: the ``.bib`` files of drafts that name none (not
    LaTeX); ``works``: a cited-works index's ranker, whose top k works follow each flag's own
    entries. Returns warnings about the bibliographies. ``encoder``: default the embedded one, where
    this install runs it (else the dense signals are left out)."""
    if encoder is None and encoder_available():
        encoder = Encoder()
    warnings = []
    for draft, syntax in drafts:
        files = set(draft.files) | {draft.name}
        mine = [s for s in found if s.file in files]
        own, problems = draft_bibliography(draft, syntax, list(bibs))
        warnings += problems
        DraftRanker(mine, own, corpus, encoder).fill(mine, k, syntax)
        if works is not None:
            target = draft_bib(draft, syntax, list(bibs))
            WorkSuggester(works, own, target, draft, mine).fill(mine, k, syntax)
    return warnings


def draft_bibliography(draft: Draft, syntax: str, bibs: list[Path],
                       sources: Mapping[str, bytes] | None = None) -> tuple[list[Candidate], list[str]]:
    """The candidates of ``draft``'s own bibliography: what a LaTeX draft or a Markdown draft's
    front matter names, else ``bibs``; and warnings. ``sources``: the draft's files by path relative
    to its main file's folder, as an editor holds them (default: read from disk)."""
    stdin = draft.name == "-"
    if syntax == "tex" and not stdin:
        return draft_candidates(Path(draft.name), sources)
    named, problems = [], []
    if syntax == "md" and not stdin:
        path = Path(draft.name)
        text = decode(sources[path.name]) if sources and path.name in sources else \
            path.read_text(encoding="utf-8", errors="replace")
        named, problems = front_matter_bibs(text, path.parent)
    named = named or bibs
    if not named:
        return [], [f"{draft.name}: {problem}" for problem in problems]
    candidates, warnings = bib_candidates(named, draft.name)
    return candidates, [f"{draft.name}: {problem}" for problem in problems] + warnings


class DraftRanker:
    """Ranks a draft's own bibliography (``own``), then ``corpus``' papers, for its sentences; the
    sentences of ``found`` that cite an entry are that entry's contexts (copies of ``own`` carry
    them, so the candidates given are never changed)."""

    def __init__(self, found: Sequence[Sentence], own: Sequence[Candidate], corpus: Sequence[Candidate] = (),
                 encoder: Encoder | None = None):
        self.by_key = {c.key.lower(): i for i, c in enumerate(own)}
        contexts: list[list[str]] = [[] for _ in own]
        for sentence in found:
            for key in sentence.cite_keys:
                if key.lower() in self.by_key:
                    contexts[self.by_key[key.lower()]].append(sentence.text)
        self.own = [replace(c, contexts=[*c.contexts, *more]) for c, more in zip(own, contexts, strict=True)]
        self.candidates = self.own + list(corpus)
        self.ranker = Ranker(self.candidates, encoder) if self.candidates else None

    def cites_own(self, sentence: Sentence) -> bool:
        return any(key.lower() in self.by_key for key in sentence.cite_keys)

    def fill(self, found: Sequence[Sentence], k: int, syntax: str, lines: Lines | None = None) -> None:
        """The top ``k`` suggestions of each flag of ``found`` (with where to insert them: ``lines``
        gives a file's lines, default from disk), the rank of each own key a cited sentence cites."""
        flagged = [s for s in found if s.status == FLAGGED]
        cited = [s for s in found if s.status == CITED and self.cites_own(s)]
        if self.ranker is None or not (flagged or cited):
            return
        fused, lines = self.fused([s.text for s in flagged + cited]), lines or _lines
        for sentence, scores in zip(flagged, fused, strict=False):
            sentence.suggestions = [self._suggested(sentence, int(i), float(scores[i]), syntax, lines)
                                    for i in order(scores)[:k]]
        for sentence, scores in zip(cited, fused[len(flagged):], strict=True):
            ranking, of = list(order(scores[:len(self.own)])), len(self.own)
            keys = [key for key in dict.fromkeys(sentence.cite_keys) if key.lower() in self.by_key]
            sentence.cited_ranks = [CitedRank(key, ranking.index(self.by_key[key.lower()]) + 1, of)
                                    for key in keys]

    def own_order(self, text: str) -> list[Candidate]:
        """The draft's own entries, best first for a sentence ``text``."""
        if self.ranker is None or not self.own:
            return []
        [scores] = self.fused([text])
        return [self.own[i] for i in order(scores[:len(self.own)])]

    def fused(self, texts: Sequence[str]) -> np.ndarray:
        return fuse(self.ranker.signals(texts))

    def _suggested(self, sentence: Sentence, index: int, score: float, syntax: str,
                   lines: Lines) -> Suggested:
        candidate, own = self.candidates[index], index < len(self.own)
        insertion = None
        if own and syntax in CITE_TEXT:
            line, column = insertion_point(sentence, lines)
            insertion = Insertion(line, column, CITE_TEXT[syntax].format(key=candidate.key))
        return Suggested(candidate.key, candidate.title, round(score, 4), BIBLIOGRAPHY if own else CORPUS,
                         insertion)


@dataclass
class DraftBib:
    """The ``.bib`` file new entries of a draft go to: the first one it names (LaTeX: ``\\bibliography``,
    else a ``.bib`` beside the main file; Markdown: its front matter, else ``--bib``)."""

    path: Path | None
    text: str = ""  # as the check read it (an editor's buffer, else the file)
    problem: str | None = None  # why no entry can be added to it: none named, read-only, unparsable
    keys: set[str] = field(default_factory=set)  # its entries' keys, lower-cased


def draft_bib(draft: Draft, syntax: str, bibs: list[Path],
              sources: Mapping[str, bytes] | None = None) -> DraftBib:
    """Where entries added to ``draft`` go, and whether they can (``sources``: as ``draft_bibliography``)."""
    stdin = draft.name == "-"
    path, text = None, None
    if syntax == "tex" and not stdin:
        main = Path(draft.name)
        texts = tex_texts(dict(sources) if sources is not None else project_files(main))
        if names := project_bib_files(texts, main.name):
            path, text = main.parent / names[0], texts[names[0]]
    else:
        named: list[Path] = []
        if syntax == "md" and not stdin:
            main = Path(draft.name)
            markdown = decode(sources[main.name]) if sources and main.name in sources else \
                main.read_text(encoding="utf-8", errors="replace")
            named = front_matter_bibs(markdown, main.parent)[0]
        if named or bibs:
            path = (named or bibs)[0]
            relative = _relative(path, Path(draft.name).parent)
            if sources is not None and relative in sources:
                text = decode(sources[relative])
    if path is None:
        return DraftBib(None, problem="the draft names no .bib file to add the entry to")
    if text is None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return DraftBib(path, problem=f"{path}: cannot be read ({exc.strerror or exc})")
    return _checked_bib(path, text)


def _checked_bib(path: Path, text: str) -> DraftBib:
    entries = read_bib(text)
    return DraftBib(path, text, _problem(path, entries), set(entries))


def bib_problem(path: Path, text: str, entry: str | None = None) -> str | None:
    """Why ``entry`` (a BibTeX entry) cannot be appended to the .bib ``path`` whose text is
    ``text``: read-only, a block BibTeX cannot parse, or its key already there; None: it can."""
    entries = read_bib(text)
    if problem := _problem(path, entries):
        return problem
    key = read_bib(entry or "")
    if any(name in entries for name in key):
        return f"{path} already has an entry {next(iter(key))!r}: nothing added"
    return None


def _problem(path: Path, entries) -> str | None:
    if _read_only(path):
        return f"{path} is read-only: no entry can be added to it"
    if entries.failed:
        return (f"{path} has {entries.failed} block(s) BibTeX cannot parse: fix the file before adding an "
                "entry to it")
    return None


def _read_only(path: Path) -> bool:
    """No write permission bit set (what root, whom ``os.access`` always lets write, is also told),
    or no write access."""
    try:
        return not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK)
    except OSError:
        return True


def _relative(path: Path, folder: Path) -> str | None:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return None


class WorkSuggester:
    """The works of a cited-works index for a draft's flags, after its own entries: the draft's own
    entries (found in the index by identifier, else fallback key) are never suggested again, and
    each work comes with the BibTeX entry that adds it to ``bib`` (a key no entry there has).

    Each sentence is asked in its draft's context (``works.Query``): the sentences around it in
    its paragraph (``sentences``: the draft's, in order), the draft's title and abstract, the
    entries it cites found in the index (all its entries when it cites none by key: a numbered
    draft), whose co-cited works the ranker favours, and among them those the sentences just before
    it in its paragraph cite."""

    def __init__(self, ranker: WorksRanker, own: Sequence[Candidate], bib: DraftBib,
                 draft: Draft | None = None, sentences: Sequence[Sentence] = ()):
        self.ranker, self.bib = ranker, bib
        found = {c.key: ranker.index.find(c.ids, c.title, c.authors, c.year) for c in own}
        self.rows = {key: row for key, row in found.items() if row is not None}  # by .bib key
        self.exclude = set(self.rows.values())
        self.about = " ".join(filter(None, (draft.title, draft.abstract))) if draft is not None else ""
        self.sentences = list(sentences)
        self.at = {(s.file, s.offset): i for i, s in enumerate(self.sentences)}
        cited = {self.rows[key] for s in self.sentences for key in s.cite_keys if key in self.rows}
        self.known = tuple(sorted(cited or self.exclude))

    def query(self, sentence: Sentence | str) -> Query:
        """What the ranker is asked for ``sentence`` (text alone: a completion's)."""
        at = None if isinstance(sentence, str) else self.at.get((sentence.file, sentence.offset))
        if at is None:  # a completion's text, or a sentence of no checked draft
            return Query(getattr(sentence, "text", sentence), "", self.about, self.known)

        def same_paragraph(start: int, stop: int) -> list[Sentence]:
            return [s for s in self.sentences[max(0, start):stop]
                    if (s.file, s.paragraph) == (sentence.file, sentence.paragraph)]

        around = " ".join(s.text for s in same_paragraph(at - 1, at) + same_paragraph(at + 1, at + 2))
        cited = (key for s in same_paragraph(at - NEARBY, at) for key in s.cite_keys)
        nearby = {self.rows[key] for key in cited if key in self.rows}
        return Query(sentence.text, around, self.about, self.known, tuple(sorted(nearby)))

    def fill(self, found: Sequence[Sentence], k: int, syntax: str, lines: Lines | None = None) -> None:
        """Append the top ``k`` works to the suggestions of each flag of ``found``, each with where
        its citation goes (``lines``: as ``DraftRanker.fill``)."""
        flagged = [s for s in found if s.status == FLAGGED]
        queries = [self.query(s) for s in flagged]
        for sentence, ranked in zip(flagged, self.ranker.rank(queries, k, self.exclude), strict=True):
            place = insertion_point(sentence, lines) if syntax in CITE_TEXT else None
            sentence.suggestions = sentence.suggestions + [self.suggested(r, syntax, place) for r in ranked]

    def ranked(self, text: str, k: int) -> list[Suggested]:
        """The top ``k`` works for a sentence ``text`` (completion: no place to insert)."""
        [ranked] = self.ranker.rank([self.query(text)], k, self.exclude)
        return [self.suggested(r, "") for r in ranked]

    def suggested(self, ranked: Ranked, syntax: str, place: tuple[int, int] | None = None) -> Suggested:
        work = ranked.work
        key = entry_key(work, self.bib.keys)
        insertion = Insertion(*place, CITE_TEXT[syntax].format(key=key)) if place else None
        entry = NewEntry(work.identifier, work.year, work.cited_by, bibtex_entry(work, key),
                         str(self.bib.path) if self.bib.path else None, self.bib.problem, ranked.why)
        return Suggested(key, work.title, round(ranked.score, 4), WORKS, insertion, entry)


def insertion_point(sentence: Sentence, lines: Lines | None = None) -> tuple[int, int]:
    """Just before the sentence's final punctuation mark in its file, else just after it."""
    line, column = sentence.end_line, sentence.end_column
    text_lines = (lines or _lines)(sentence.file)
    if line > len(text_lines):
        return line, column
    text = text_lines[line - 1]
    stop = 2 <= column <= len(text) + 1 and text[column - 2] in _FINAL_PUNCTUATION
    return (line, column - 1) if stop else (line, column)


@functools.lru_cache(maxsize=64)
def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
