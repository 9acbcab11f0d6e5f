"""A LaTeX paper's bibliography: the ``.bbl`` of the main file, an inline ``thebibliography``, ``.bib`` files.

Entries are looked up by citation key in that order of precedence (a key missing from the ``.bbl``
is looked up in the next source); a ``.bbl`` or ``thebibliography`` entry takes its title from the
``.bib`` entry of its key when there is one. ``.bib`` keys are matched case-insensitively, as
BibTeX matches them; only the cited entries of a ``.bib`` are the paper's references (BibTeX writes
no others).
``\\bibitem`` entries (natbib and plain styles) and biblatex ``.bbl`` entries (``\\entry...\\endentry``)
are read; ``.bib`` files with bibtexparser.

Each reference gets a stable id (``stable_id``): ``doi:<DOI>`` or ``arxiv:<id>`` when the entry
states one (in a field, a URL or its text), else ``title:<hash of the normalised title>``, else
``entry:<hash of its text>`` -- never a random id, so reruns and other papers citing the same work
agree.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
from dataclasses import dataclass, field, replace

import bibtexparser
from bibtexparser.model import DuplicateBlockKeyBlock
from pylatexenc import latexwalker

from citeworth.core.paper import normalise_id
from citeworth.sources.latex.parser import TEXT_CONTEXT, node_text
from citeworth.sources.latex.project import strip_comments

log = logging.getLogger(__name__)

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}\\]+)", re.I)
_ARXIV = re.compile(
    r"(?:arxiv[\s:./]*(?:abs/|pdf/)?|\babs/|arxiv\.org/(?:abs|pdf)/)"
    r"(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?",
    re.I,
)
_YEAR = re.compile(r"\b(1[89]\d{2}|20\d{2})[a-z]?\b")
_BIBITEM = re.compile(r"\\bibitem\s*(?:\[)?")
_BIBLATEX_ENTRY = re.compile(
    r"\\entry\{(?P<key>[^{}]+)\}\{(?P<type>[^{}]*)\}\{[^{}]*\}(?P<body>.*?)\\endentry", re.S
)
_BIBLATEX_FIELD = re.compile(
    r"\\field\{(?P<name>[^{}]+)\}\{(?P<value>(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}"
)
_BIBLATEX_VERB = re.compile(r"\\verb\{(?P<name>[^{}]+)\}\s*\\verb\s+(?P<value>.*?)\s*\\endverb", re.S)
_BIBLATEX_FAMILY = re.compile(r"family=\{((?:[^{}]|\{[^{}]*\})*)\}")
_BIBLIOGRAPHY_CMD = re.compile(
    r"\\(?:bibliography|addbibresource|addglobalbib)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}"
)
_NEWBLOCK = re.compile(r"\\newblock\b")
# splncs04's "Surname, F., Other, A.B.: Title" (authors' initials, or "et al.", before the colon).
_AUTHORS_COLON = re.compile(r"(?P<authors>[^:]{1,2000}?(?:\b[A-Z][a-z]?\.|et al\.)):\s+")
_TITLE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9]|arXiv\b)")
_TRAILING_YEAR = re.compile(r"\s*\(\d{4}[a-z]?\)$")
_NON_WORD = re.compile(r"[^\w]+")
_MAX_TEXT = 2000
_TRAILING = ".,;:)]}"


@dataclass(frozen=True)
class Reference:
    """One bibliography entry as the source states it."""

    key: str
    raw: str  # the entry as text (LaTeX turned into Unicode)
    title: str | None = None
    year: int | None = None
    authors: tuple[str, ...] = ()  # surnames
    ids: dict[str, str] = field(default_factory=dict)  # doi / arxiv, normalised
    origin: str = ""  # "bbl" | "thebibliography" | "bib"

    @property
    def stable_id(self) -> str:
        if "doi" in self.ids:
            return f"doi:{self.ids['doi']}"
        if "arxiv" in self.ids:
            return f"arxiv:{self.ids['arxiv']}"
        if self.title and (title := normalised_title(self.title)):
            return f"title:{_digest(title)}"
        return f"entry:{_digest(self.raw or self.key)}"


@dataclass
class Bibliography:
    """References by key from each source, looked up in order of precedence."""

    # (origin, references by key): a dict for .bbl / thebibliography, BibEntries for .bib files
    sources: list[tuple[str, dict[str, Reference] | BibEntries]] = field(default_factory=list)

    def lookup(self, key: str) -> Reference | None:
        for _, references in self.sources:
            found = references.get(key) or references.get(key.lower())
            if found is not None:
                return found
        return None

    @property
    def listed(self) -> list[Reference]:
        """The references a reader of the paper sees: every ``.bbl``/``thebibliography`` entry
        (in order); ``.bib`` entries only when cited (see ``Bibliography.cited``)."""
        return [ref for origin, refs in self.sources if origin != "bib" for ref in refs.values()]

    def __bool__(self) -> bool:
        return any(references for _, references in self.sources)


def normalised_title(title: str) -> str:
    """Lower-case words of a title, punctuation and LaTeX braces dropped (for hashing and matching)."""
    return " ".join(_NON_WORD.sub(" ", title.lower()).split())


def load_bibliography(texts: dict[str, str], main: str, parse_text: str, inline: str | None) -> Bibliography:
    """The bibliography sources of a project (see the module docstring); empty when it has none."""
    bib = BibEntries()
    for name in bib_files(texts, main, parse_text):
        bib.merge(read_bib(texts[name]))
    bibliography = Bibliography()
    bbl = _main_bbl(texts, main)
    for origin, text in (("bbl", texts[bbl] if bbl else None), ("thebibliography", inline)):
        if text:
            bibliography.sources.append((origin, _bib_titles(read_bbl(text, origin), bib)))
    if bib:
        bibliography.sources.append(("bib", bib))
    return bibliography


def _bib_titles(references: dict[str, Reference], bib: BibEntries) -> dict[str, Reference]:
    """``references`` with the title of the ``.bib`` entry of their key, where there is one: the
    ``.bib`` states it as a field, a ``.bbl`` only as the style printed it (some styles leave no
    structure to find it in)."""
    return {
        key: replace(reference, title=entry.title) if (entry := bib.get(key)) and entry.title else reference
        for key, reference in references.items()
    }


def _main_bbl(texts: dict[str, str], main: str) -> str | None:
    named = posixpath.splitext(main)[0] + ".bbl"
    if named in texts:
        return named
    bbls = [name for name in texts if name.endswith(".bbl")]
    return bbls[0] if len(bbls) == 1 else None


def bib_files(texts: dict[str, str], main: str, parse_text: str) -> list[str]:
    """The ``.bib`` files ``\\bibliography``/``\\addbibresource`` name; all of them when none is named."""
    named = []
    folder = posixpath.dirname(main)
    for match in _BIBLIOGRAPHY_CMD.finditer(strip_comments(parse_text)):
        for name in match.group(1).split(","):
            name = name.strip()
            path = posixpath.normpath(posixpath.join(folder, name))
            for candidate in (path, path + ".bib", name, name + ".bib"):
                if candidate in texts and candidate.endswith(".bib"):
                    named.append(candidate)
                    break
    if named:
        return list(dict.fromkeys(named))
    return sorted(name for name in texts if name.endswith(".bib"))


def read_bbl(text: str, origin: str) -> dict[str, Reference]:
    """``\\bibitem`` entries (natbib / plain) or biblatex ``\\entry`` records, by key."""
    text = strip_comments(text)
    if "\\entry{" in text:
        return _biblatex_bbl(text, origin)
    references: dict[str, Reference] = {}
    starts = [m.start() for m in _BIBITEM.finditer(text)] + [len(text)]
    end_env = text.find("\\end{thebibliography}")
    for start, end in zip(starts, starts[1:], strict=False):
        parsed = _bibitem(text[start : end if end_env == -1 or end_env < start else min(end, end_env)])
        if parsed is not None:
            references.setdefault(parsed[0], _reference(parsed[0], parsed[1], origin, label=parsed[2]))
    return references


def _bibitem(chunk: str) -> tuple[str, str, str | None] | None:
    """``(key, body, label)`` of one ``\\bibitem[label]{key} body``."""
    position = len("\\bibitem")
    label = None
    while position < len(chunk) and chunk[position].isspace():
        position += 1
    if chunk.startswith("[", position):
        depth, index = 0, position
        for index in range(position, len(chunk)):
            char = chunk[index]
            depth += char == "{"
            depth -= char == "}"
            if char == "]" and depth == 0:
                break
        label = chunk[position + 1 : index]
        position = index + 1
    match = re.compile(r"\s*\{([^{}]*)\}").match(chunk, position)
    if not match or not match.group(1).strip():
        return None
    return match.group(1).strip(), chunk[match.end() :], label


def _reference(key: str, body: str, origin: str, label: str | None = None) -> Reference:
    """A ``\\bibitem``'s reference. Its authors and title: the first and second of three or more
    ``\\newblock`` blocks (plain and natbib styles); else, after an author list ending in a colon
    (Springer's splncs04, which writes ``Author, A.: Title. In: Venue...`` with no ``\\newblock``),
    the list and what follows it to the end of its sentence."""
    blocks = [block.strip() for block in _NEWBLOCK.split(body) if block.strip()]
    raw = _text(" ".join(blocks))
    title, authors = None, ""
    if len(blocks) >= 3:
        title, authors = _text(blocks[1]).rstrip("."), _text(blocks[0])
    elif match := _AUTHORS_COLON.match(raw):
        title, authors = _sentence_title(raw[match.end() :]), match.group("authors")
    elif blocks:
        authors = _text(blocks[0])
    surnames = _label_surnames(label) or _surnames_of_list(authors)
    return Reference(key, raw, title or None, _year(raw), surnames, _ids_from_text(body), origin)


def _sentence_title(text: str) -> str:
    """A title at the start of ``text``, up to the period (kept: ? and !) BibTeX ended it with: one
    followed by a capital, a digit or arXiv (splncs04 lower-cases titles but for their first letter);
    a title with nothing after it loses a trailing "(year)"."""
    title = _TITLE_END.split(text, maxsplit=1)[0]
    return _TRAILING_YEAR.sub("", title).rstrip(". ")


def _label_surnames(label: str | None) -> tuple[str, ...]:
    """natbib's long author list: ``\\bibitem[{Baly et~al.(2018)Baly, Mohtarami, and Nakov}]``."""
    if not label or ")" not in label:
        return ()
    names = _text(label.rsplit(")", 1)[1].strip("{} "))
    return tuple(n.strip(' "') for n in re.split(r",\s*(?:and\s+)?|\s+and\s+", names) if n.strip(' "'))


def _surnames_of_list(authors: str) -> tuple[str, ...]:
    """``A. Smith, B. Jones and C. Lee`` -> (Smith, Jones, Lee); ``Smith, A.`` forms keep the first word."""
    parts = [
        p.strip() for p in re.split(r",?\s+and\s+|;|,(?=\s*[A-Z][a-z])", authors.strip()) if p.strip()
    ]
    surnames = []
    for part in parts[:50]:
        words = [
            w for w in part.replace(".", ". ").split() if not re.fullmatch(r"[A-Z]\.|[A-Z]\.-[A-Z]\.", w)
        ]
        if words and words[-1] not in ("al", "al.", "others"):
            surnames.append(words[-1].strip(",."))
    return tuple(surnames)


def _biblatex_bbl(text: str, origin: str) -> dict[str, Reference]:
    references = {}
    for match in _BIBLATEX_ENTRY.finditer(text):
        body = match.group("body")
        fields = {m.group("name"): m.group("value") for m in _BIBLATEX_FIELD.finditer(body)}
        verbs = {m.group("name"): m.group("value") for m in _BIBLATEX_VERB.finditer(body)}
        names = body.split("\\name{author}", 1)
        surnames = (
            tuple(_text(s) for s in _BIBLATEX_FAMILY.findall(names[1].split("\\endlist", 1)[0]))
            if len(names) > 1
            else ()
        )
        fields.update(verbs)
        references[match.group("key")] = _fields_reference(match.group("key"), fields, surnames, origin)
    return references


class BibEntries:
    """A ``.bib`` file's entries by lower-cased key, turned into References only when looked up:
    converting LaTeX to text is the slow part, and most entries of a shared ``.bib`` are never cited."""

    def __init__(self) -> None:
        self._fields: dict[str, tuple[str, dict[str, str]]] = {}
        self._done: dict[str, Reference] = {}
        self.failed = 0  # blocks the parser could not read
        self.duplicates = 0  # entries dropped: their key (any case) came earlier

    def add(self, key: str, fields: dict[str, str]) -> None:
        self.duplicates += key.lower() in self._fields
        self._fields.setdefault(key.lower(), (key, fields))

    def fields(self, key: str) -> dict[str, str]:
        """The entry's fields as written (lower-case names, LaTeX kept); empty for an unknown key."""
        return self._fields.get(key.lower(), ("", {}))[1]

    def merge(self, other: BibEntries) -> None:
        for key, fields in other._fields.values():
            self.add(key, fields)
        self.failed += other.failed
        self.duplicates += other.duplicates

    def get(self, key: str) -> Reference | None:
        key = key.lower()
        if key not in self._done and key in self._fields:
            original, fields = self._fields[key]
            authors = tuple(
                _bib_surname(name)
                for name in re.split(r"\s+and\s+", _text(fields.get("author", "")))
                if name.strip() and name.strip() != "others"
            )
            self._done[key] = _fields_reference(original, fields, authors, "bib")
        return self._done.get(key)

    def __iter__(self):
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


def read_bib(text: str) -> BibEntries:
    """A ``.bib`` file's entries (bibtexparser; a block it cannot parse is skipped and logged)."""
    library = bibtexparser.parse_string(text)
    if library.failed_blocks:
        log.info("%d bib block(s) could not be parsed", len(library.failed_blocks))
    entries = BibEntries()
    duplicated = sum(isinstance(block, DuplicateBlockKeyBlock) for block in library.failed_blocks)
    entries.failed, entries.duplicates = len(library.failed_blocks) - duplicated, duplicated
    for entry in library.entries:
        entries.add(entry.key, {name.lower(): str(value.value) for name, value in entry.fields_dict.items()})
    return entries


def _bib_surname(name: str) -> str:
    name = name.strip()
    return name.split(",")[0].strip() if "," in name else name.split()[-1]


def _fields_reference(key: str, fields: dict[str, str], authors: tuple[str, ...], origin: str) -> Reference:
    title = _text(fields.get("title", "")).rstrip(".") or None
    parts = [
        ", ".join(authors),
        title,
        _text(
            fields.get("journal")
            or fields.get("journaltitle")
            or fields.get("booktitle")
            or fields.get("publisher")
            or ""
        ),
        fields.get("year") or fields.get("date", "")[:4],
    ]
    raw = ". ".join(p for p in parts if p)
    ids = {}
    if doi := _first_doi(fields.get("doi", "")) or _first_doi(fields.get("url", "")):
        ids["doi"] = doi
    eprint = fields.get("eprint", "")
    prefix = (fields.get("archiveprefix") or fields.get("eprinttype") or "").lower()
    if eprint and (prefix == "arxiv" or re.fullmatch(r"\d{4}\.\d{4,5}(v\d+)?", eprint.strip())):
        ids["arxiv"] = normalise_id("arxiv", eprint)
    else:
        found = _ids_from_text(
            " ".join(fields.get(name, "") for name in ("journal", "url", "note", "howpublished", "volume"))
        )
        if "arxiv" in found:
            ids["arxiv"] = found["arxiv"]
    return Reference(
        key,
        raw[:_MAX_TEXT],
        title,
        _year(fields.get("year") or fields.get("date") or ""),
        authors,
        ids,
        origin,
    )


def _ids_from_text(text: str) -> dict[str, str]:
    ids = {}
    if doi := _first_doi(text):
        ids["doi"] = doi
    if match := _ARXIV.search(text):
        ids["arxiv"] = normalise_id("arxiv", match.group(1))
    return ids


def _first_doi(text: str) -> str | None:
    match = _DOI.search(text.replace("\\_", "_"))
    return normalise_id("doi", match.group(1).rstrip(_TRAILING)) if match else None


def _year(text: str) -> int | None:
    match = _YEAR.search(text)
    return int(match.group(1)) if match else None


def _text(latex: str) -> str:
    """LaTeX -> plain text on one line (accents resolved, braces and unknown macros dropped), node
    by node, so one malformed macro costs its own text only."""
    if not latex:
        return ""
    try:
        nodes = latexwalker.LatexWalker(
            latex, latex_context=TEXT_CONTEXT, tolerant_parsing=True
        ).get_latex_nodes()[0]
    except latexwalker.LatexWalkerError:
        nodes = []
    text = "".join(node_text(node) for node in nodes) if nodes else re.sub(r"\\[a-zA-Z]+", "", latex)
    return " ".join(re.sub(r"[{}\\]", "", text.replace("~", " ")).split())[:_MAX_TEXT]


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]
