"""What can be suggested: the entries of a draft's own bibliography (or the corpus' papers), each
with the text the rankers read.

A LaTeX draft's candidates are the entries of the ``.bib`` files its main file names
(``\\bibliography``, ``\\addbibresource``; every ``.bib`` beside it when none is named), all of
them, cited or not: an author's ``.bib`` is the shelf they pick from. Without a ``.bib``, the
entries of its ``.bbl`` or ``thebibliography``. Keys are spelled as the source spells them and
looked up case-insensitively, as BibTeX does; a duplicate key keeps its first entry.

A Markdown draft's candidates are the entries of the ``.bib`` files its pandoc-style YAML front
matter names (``bibliography: refs.bib`` or a list, relative to the draft's folder); ``check
--bib FILE`` names them for any draft that names none (Markdown, plain text, stdin).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from citeworth.sources.latex import project_files
from citeworth.sources.latex.bibliography import (
    BibEntries,
    Reference,
    bib_files,
    load_bibliography,
    read_bib,
)
from citeworth.sources.latex.project import flatten, strip_comments, tex_texts

_BIB_COMMAND = re.compile(r"\\(?:bibliography|addbibresource|addglobalbib)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")
_THEBIBLIOGRAPHY = re.compile(r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}", re.S)
# "A. Smith, B. Jones, and C. Lee. Title of the paper. Venue, 2019.": the authors end at the first
# period after a word of two letters or more (an initial does not end them).
_RAW_AUTHORS_END = re.compile(r"(?<=[^\W\d_]{2})\.\s+|(?<=\))\.\s+|(?<=\.):\s+")
_RAW_AUTHOR_SEPARATOR = re.compile(r",\s*(?:and\s+)?|;\s*|\s+and\s+|\s*&\s*")
_INITIALS = re.compile(r"(?:[A-Z]\.-?)+|et|al\.?|others", re.I)
_RAW_TITLE_END = re.compile(r"[.?!]\s+|,\s+(?:in|In)\s+")
_LATEX_LEFTOVER = re.compile(r"\\[a-zA-Z]+|[{}]")
_FRONT_MATTER = re.compile(r"\A(?:\ufeff)?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)


@dataclass
class Candidate:
    """One entry that could be cited."""

    key: str  # as the bibliography spells it (corpus: the paper's id)
    title: str | None
    authors: tuple[str, ...] = ()  # surnames, first author first
    year: int | None = None
    text: str = ""  # what BM25 and the encoder read: title, abstract, keywords, authors
    contexts: list[str] = field(default_factory=list)  # sentences that cite it elsewhere
    ids: dict[str, str] = field(default_factory=dict)  # identifiers it states (doi, arxiv), normalised

    @property
    def label(self) -> str:
        return self.title or self.text[:120]


def from_reference(reference: Reference, fields: dict[str, str] | None = None) -> Candidate:
    """A bibliography entry as a candidate; ``fields``: a ``.bib`` entry's own (abstract, keywords)."""
    fields = fields or {}
    extra = [_plain(fields.get(name, "")) for name in ("abstract", "keywords")]
    head = reference.title or reference.raw
    text = ". ".join(part for part in (head, *extra, " ".join(reference.authors)) if part)
    return Candidate(reference.key, reference.title, reference.authors, reference.year, text,
                     ids=dict(reference.ids))


def from_raw(key: str, raw: str, year: int | None = None) -> Candidate:
    """A printed reference ("A. Smith and B. Jones. Title. Venue, 2019."): its surnames and title
    read off the text (unarXive's bibliographies are such strings)."""
    authors_end = _RAW_AUTHORS_END.search(raw)
    authors = _raw_surnames(raw[:authors_end.start()]) if authors_end else ()
    rest = raw[authors_end.end():] if authors_end else raw
    title_end = _RAW_TITLE_END.search(rest)
    title = (rest[:title_end.start()] if title_end else rest).strip(" .\"“”") or None
    if year is None and (found := re.search(r"\b(1[89]\d\d|20\d\d)\b", raw)):
        year = int(found.group(1))
    return Candidate(key, title, authors, year, raw)


def _raw_surnames(authors: str) -> tuple[str, ...]:
    """'T. Alazard, O. Lazar, and Q. H. Nguyen' or 'Vaswani, A., Shazeer, N.' -> the surnames."""
    surnames = []
    for part in _RAW_AUTHOR_SEPARATOR.split(authors):
        words = [w for w in part.split() if not _INITIALS.fullmatch(w)]
        if words:
            surnames.append(words[-1].strip(",."))
    return tuple(surnames)


def _plain(latex: str) -> str:
    """Abstracts and keywords for ranking: LaTeX commands and braces dropped (their words are kept;
    decoding every abstract of a large ``.bib`` with pylatexenc would cost seconds for no gain)."""
    return " ".join(_LATEX_LEFTOVER.sub(" ", latex).split())


def draft_candidates(main: Path,
                     sources: Mapping[str, bytes] | None = None) -> tuple[list[Candidate], list[str]]:
    """The candidates of the LaTeX draft ``main`` and the files below its folder (see the module
    docstring), and warnings: a ``.bib`` named but missing, unreadable blocks, duplicate keys, none.
    ``sources``: that project by path relative to the folder (default: read from disk)."""
    files = dict(sources) if sources is not None else project_files(main)
    return project_candidates(tex_texts(files), main.name, str(main))


def project_candidates(texts: dict[str, str], main: str, label: str) -> tuple[list[Candidate], list[str]]:
    """``draft_candidates`` of a project as ``{relative path: text}``; ``label`` names it in warnings."""
    parse_text = flatten(texts, main).parse_text
    uncommented = strip_comments(parse_text)
    inline = _THEBIBLIOGRAPHY.search(uncommented)
    bibliography = load_bibliography(texts, main, parse_text, inline.group() if inline else None)
    warnings = [f"{label}: \\bibliography names {name!r}, which does not exist (not suggested from)"
                for name in _named_bibs(uncommented, posixpath.dirname(main)) if name not in texts]
    bib = next((refs for origin, refs in bibliography.sources if origin == "bib"), None)
    if bib is not None:
        warnings += _bib_warnings(label, bib)
        candidates = [from_reference(ref, bib.fields(key)) for key in bib if (ref := bib.get(key))]
    else:
        candidates = [from_reference(ref) for ref in bibliography.listed]
    if not candidates:
        warnings.append(f"{label}: no bibliography entries (.bib, .bbl or thebibliography): "
                        "nothing to suggest from")
    return candidates, warnings


def project_bib_files(texts: dict[str, str], main: str) -> list[str]:
    """The ``.bib`` files of a LaTeX project (``{relative path: text}``) its main file names, else
    every ``.bib`` in it: where its bibliography lives."""
    return bib_files(texts, main, flatten(texts, main).parse_text)


def bib_candidates(paths: list[Path], label: str) -> tuple[list[Candidate], list[str]]:
    """The entries of the ``.bib`` files ``paths`` (the first of a duplicated key kept), and warnings."""
    entries, warnings = BibEntries(), []
    for path in paths:
        try:
            entries.merge(read_bib(path.read_text(encoding="utf-8", errors="replace")))
        except OSError as exc:
            warnings.append(f"{label}: cannot read bibliography {str(path)!r}: {exc.strerror or exc} "
                            "(not suggested from)")
    warnings += _bib_warnings(label, entries)
    candidates = [from_reference(ref, entries.fields(key)) for key in entries if (ref := entries.get(key))]
    if not candidates:
        warnings.append(f"{label}: no bibliography entries in {', '.join(map(str, paths))}: "
                        "nothing to suggest from")
    return candidates, warnings


def front_matter_bibs(markdown: str, folder: Path) -> tuple[list[Path], list[str]]:
    """The ``.bib`` paths a Markdown draft's YAML front matter names (``bibliography:``, a path or
    a list of them, relative to ``folder``), and a problem if the front matter is not YAML."""
    import yaml

    found = _FRONT_MATTER.match(markdown)
    if not found:
        return [], []
    try:
        meta = yaml.safe_load(found.group(1))
    except yaml.YAMLError as exc:
        return [], [f"front matter is not YAML ({exc.__class__.__name__}): its bibliography is not read"]
    named = meta.get("bibliography") if isinstance(meta, dict) else None
    names = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    return [folder / str(name) for name in names if name], []


def _named_bibs(text: str, folder: str) -> list[str]:
    """The ``.bib`` paths the commands name, relative to the project's root."""
    names = [name.strip() for match in _BIB_COMMAND.finditer(text) for name in match.group(1).split(",")]
    return [posixpath.normpath(posixpath.join(folder, name if name.endswith(".bib") else f"{name}.bib"))
            for name in names if name]


def _bib_warnings(label: str, bib: BibEntries) -> list[str]:
    warnings = []
    if bib.failed:
        warnings.append(f"{label}: {bib.failed} .bib block(s) could not be parsed (skipped)")
    if bib.duplicates:
        warnings.append(f"{label}: {bib.duplicates} duplicate .bib key(s): the first entry of each is used")
    return warnings
