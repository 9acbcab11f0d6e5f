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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citeworth.check.draft import CITED, FLAGGED, Draft, Sentence
from citeworth.suggest import BIBLIOGRAPHY, CORPUS
from citeworth.suggest.candidates import Candidate, bib_candidates, draft_candidates, front_matter_bibs
from citeworth.suggest.dense import Encoder
from citeworth.suggest.ranker import Ranker, fuse, order

CITE_TEXT = {"tex": "~\\cite{{{key}}}", "md": " [@{key}]"}
_FINAL_PUNCTUATION = ".!?;:"


@dataclass(frozen=True)
class Insertion:
    """Where and what to insert to cite a suggestion (1-based line, column in code points)."""

    line: int
    column: int
    text: str


@dataclass(frozen=True)
class Suggested:
    key: str  # as the bibliography spells it; a corpus paper's identifier
    title: str | None
    score: float
    source: str  # BIBLIOGRAPHY or CORPUS
    insertion: Insertion | None = None  # bibliography entries of LaTeX and Markdown drafts


@dataclass(frozen=True)
class CitedRank:
    key: str
    rank: int  # 1 = the entry the ranker puts first
    of: int  # entries ranked


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
        _suggest_draft(mine, own, list(corpus), syntax, k, encoder)
    return warnings


def draft_bibliography(draft: Draft, syntax: str, bibs: list[Path]) -> tuple[list[Candidate], list[str]]:
    """The candidates of ``draft``'s own bibliography: what a LaTeX draft or a Markdown draft's
    front matter names, else ``bibs``; and warnings."""
    stdin = draft.name == "-"
    if syntax == "tex" and not stdin:
        return draft_candidates(Path(draft.name))
    named, problems = [], []
    if syntax == "md" and not stdin:
        path = Path(draft.name)
        named, problems = front_matter_bibs(path.read_text(encoding="utf-8", errors="replace"), path.parent)
    named = named or bibs
    if not named:
        return [], [f"{draft.name}: {problem}" for problem in problems]
    candidates, warnings = bib_candidates(named, draft.name)
    return candidates, [f"{draft.name}: {problem}" for problem in problems] + warnings


def _suggest_draft(found: list[Sentence], own: list[Candidate], corpus: list[Candidate], syntax: str, k: int,
                   encoder: Encoder) -> None:
    by_key = {c.key.lower(): i for i, c in enumerate(own)}
    for sentence in found:  # the draft's citing sentences are its entries' contexts
        for key in sentence.cite_keys:
            if key.lower() in by_key:
                own[by_key[key.lower()]].contexts.append(sentence.text)
    flagged = [s for s in found if s.status == FLAGGED]
    cited = [s for s in found if s.status == CITED and any(key.lower() in by_key for key in s.cite_keys)]
    candidates = own + corpus
    if not candidates or not (flagged or cited):
        return
    ranker = Ranker(candidates, encoder)
    fused = fuse(ranker.signals([s.text for s in flagged + cited]))
    for sentence, scores in zip(flagged, fused, strict=False):
        sentence.suggestions = [_suggested(sentence, candidates[i], float(scores[i]), i < len(own), syntax)
                                for i in order(scores)[:k]]
    for sentence, scores in zip(cited, fused[len(flagged):], strict=True):
        ranking = list(order(scores[:len(own)]))
        sentence.cited_ranks = [CitedRank(key, ranking.index(by_key[key.lower()]) + 1, len(own))
                                for key in dict.fromkeys(sentence.cite_keys) if key.lower() in by_key]


def _suggested(sentence: Sentence, candidate: Candidate, score: float, own: bool, syntax: str) -> Suggested:
    insertion = None
    if own and syntax in CITE_TEXT:
        line, column = insertion_point(sentence)
        insertion = Insertion(line, column, CITE_TEXT[syntax].format(key=candidate.key))
    source = BIBLIOGRAPHY if own else CORPUS
    return Suggested(candidate.key, candidate.title, round(score, 4), source, insertion)


def insertion_point(sentence: Sentence) -> tuple[int, int]:
    """Just before the sentence's final punctuation mark in its file, else just after it."""
    line, column = sentence.end_line, sentence.end_column
    lines = _lines(sentence.file)
    if line > len(lines):
        return line, column
    text = lines[line - 1]
    stop = 2 <= column <= len(text) + 1 and text[column - 2] in _FINAL_PUNCTUATION
    return (line, column - 1) if stop else (line, column)


@functools.lru_cache(maxsize=64)
def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
