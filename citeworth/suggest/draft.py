"""``citeworth check --suggest``: suggestions for a checked draft's sentences.

For each reported flag, the top k candidates (the draft's own bibliography, then with ``--corpus``
the corpus' papers), each with the place a citation would go: before the sentence's final
punctuation, as ``~\\cite{key}`` (LaTeX) or `` [@key]`` (Markdown). For each cited sentence, the
rank the ranker gives each key it cites among the bibliography. A low rank is reported, never
called a sign of a wrong citation: on the benchmark (benchmarks/results/suggest.json,
``low_rank``) 11% of correct citations fall in their bibliography's last 10% and 8% in its last
5%, more than a key placed at random would, so no threshold separates right from wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from citeworth.drafts import (
    BIBLIOGRAPHY,
    CITED,
    CORPUS,
    FLAGGED,
    CitedRank,
    Draft,
    Insertion,
    Sentence,
    Suggested,
)
from citeworth.sources.latex.project import decode
from citeworth.suggest.candidates import Candidate, bib_candidates, draft_candidates, front_matter_bibs
from citeworth.suggest.dense import Encoder
from citeworth.suggest.ranker import Ranker, fuse, order

CITE_TEXT = {"tex": "~\\cite{{{key}}}", "md": " [@{key}]"}
_FINAL_PUNCTUATION = ".!?;:"
Lines = Callable[[str], list[str]]  # a file's path -> its lines (from disk, or an editor's buffer)


def suggest(drafts: Sequence[tuple[Draft, str]], found: Sequence[Sentence], k: int,
            corpus: Sequence[Candidate] = (), encoder: Encoder | None = None,
            bibs: Sequence[Path] = ()) -> list[str]:
    """Fill ``suggestions`` and ``cited_ranks`` of ``found``'s sentences; ``drafts``: each draft
    with its syntax (tex, md, txt); ``bibs``: the ``.bib`` files of drafts that name none (not
    LaTeX). Returns warnings about the bibliographies."""
    encoder = encoder or Encoder()
    warnings = []
    for draft, syntax in drafts:
        files = set(draft.files) | {draft.name}
        mine = [s for s in found if s.file in files]
        own, problems = draft_bibliography(draft, syntax, list(bibs))
        warnings += problems
        DraftRanker(mine, own, corpus, encoder).fill(mine, k, syntax)
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
