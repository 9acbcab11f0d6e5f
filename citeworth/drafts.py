"""A draft as the check's readers produce it, the sentences checked in it and what is suggested for
them: the types ``citeworth.check`` (readers, rules, reports), ``citeworth.suggest`` (which entry to
cite) and ``citeworth.lsp`` (the language server) share. They live here, below all three, so that
the dependency runs one way: ``check`` and ``lsp`` import ``suggest``, and ``suggest`` never imports
``check``.

A reader turns a file into blocks of running text: a block's ``text`` keeps its citation markers,
``cites`` says where they are, ``unbreakable`` where a sentence boundary may not fall (formulas,
code), and ``origin`` maps text offsets to *document offsets*: offsets into one sequence the
reader defines (LaTeX: the flattened source, so order holds across ``\\input`` files; Markdown and
plain text: the file's text), which ``Draft.locate`` turns into ``file:line:column`` and against
which suppression directives are ordered. ``citeworth.check.draft`` cuts blocks into sentences.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from citeworth.sources.latex import SourcePosition

Span = tuple[int, int]
# A sentence's status; ``suppressed`` (by a directive) and ``baselined`` are flags not reported.
CITED, FLAGGED, OK, SUPPRESSED, BASELINED = "cited", "flagged", "ok", "suppressed", "baselined"
# Where a suggestion comes from: the draft's own bibliography, the papers of a paper index, or the
# works of a cited-works index (not in the draft's bibliography yet).
BIBLIOGRAPHY, CORPUS, WORKS = "bibliography", "corpus", "works"


@dataclass
class Block:
    """A paragraph of running text."""

    text: str
    cites: list[Span]  # citation markers in ``text``, sorted
    origin: Callable[[int, int], Span]  # text [start, end) -> document [start, end)
    unbreakable: list[Span] = field(default_factory=list)  # no sentence boundary inside (sorted)
    replacements: dict[str, str] = field(default_factory=dict)  # placeholder -> what the model reads
    cited_by_patterns: bool = False  # also cited when the curation's patterns find a citation


@dataclass
class Directive:
    """A suppression comment: ``ignore`` (the next sentence), ``off`` / ``on`` (a stretch)."""

    offset: int  # document offset
    word: str


@dataclass
class Draft:
    """One input as a reader read it."""

    name: str  # the path as given ("-" for stdin)
    blocks: list[Block]
    locate: Callable[[int], SourcePosition]  # document offset -> file, line, column
    directives: list[Directive] = field(default_factory=list)
    cite_anchors: list[int] = field(default_factory=list)  # citations outside the text (footnotes)
    files: list[str] = field(default_factory=list)  # every file it read (so no file is checked twice)
    warnings: list[str] = field(default_factory=list)
    title: str | None = None  # LaTeX's \\title, Markdown's front matter title or first heading
    abstract: str | None = None  # LaTeX's abstract environment, Markdown's front matter abstract


@dataclass(frozen=True)
class Insertion:
    """Where and what to insert to cite a suggestion (1-based line, column in code points)."""

    line: int
    column: int
    text: str


@dataclass(frozen=True)
class NewEntry:
    """What citing a work of the cited-works index adds to the draft's bibliography."""

    identifier: str  # the work's DOI, PMID... ("doi:10.1/x"), else its fallback key
    year: int | None
    cited_by: int  # papers of the corpus citing it
    bibtex: str  # the entry to append, keyed with the suggestion's key
    bib: str | None  # the .bib file it goes to; None: the draft names none
    bib_problem: str | None = None  # why it cannot be added there (read-only, unparsable, none)
    why: tuple[str, ...] = ()  # why it is suggested ("co-cited with 'X' in 3 papers"), strongest first


@dataclass(frozen=True)
class Suggested:
    key: str  # as the bibliography spells it; a corpus paper's identifier; a work's new BibTeX key
    title: str | None
    score: float
    source: str  # BIBLIOGRAPHY, CORPUS or WORKS
    insertion: Insertion | None = None  # bibliography entries and works, in LaTeX and Markdown drafts
    entry: NewEntry | None = None  # a work of the cited-works index


@dataclass(frozen=True)
class CitedRank:
    key: str
    rank: int  # 1 = the entry the ranker puts first
    of: int  # entries ranked


@dataclass
class Sentence:
    file: str
    line: int
    column: int
    end_line: int
    end_column: int  # one past the last character
    text: str  # what the model reads: citations removed
    cited: bool
    offset: int  # document offset of its start (ordered against directives)
    suppressed: bool = False  # by a directive
    score: float | None = None
    status: str = ""  # one of CITED, FLAGGED, OK, SUPPRESSED, BASELINED
    cite_keys: tuple[str, ...] = ()  # the keys its citations name (LaTeX, pandoc), as written
    suggestions: list[Suggested] = field(default_factory=list)  # best first
    cited_ranks: list[CitedRank] = field(default_factory=list)  # one per cited key in the bibliography
    paragraph: int = 0  # the number of its block among the checked drafts' (its neighbours share it)

    @property
    def fingerprint(self) -> str:
        """Identity of the sentence by its text alone, so a moved sentence keeps it."""
        return hashlib.sha256(" ".join(self.text.split()).encode()).hexdigest()[:16]
