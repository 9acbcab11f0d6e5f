"""A BibTeX entry made from a cited work's metadata, to add a suggested work to a draft's ``.bib``.

The key is stable: the first author's surname, the year and the first word of the title that is
not a stop word, folded to ASCII letters (``hughes2017global``); a key the ``.bib`` already has
(any case, as BibTeX compares them) gets a letter (``hughes2017globala``, ``...b``). A work whose
DOI (or arXiv id) an entry of the ``.bib`` already has is not added again: that entry's key is
cited instead. Titles, names and venues are escaped for LaTeX (``&``, ``%``, ``_``...; other text
stays UTF-8, which biber and BibTeX 0.99 with inputenc read).
"""

from __future__ import annotations

import itertools
import re
import string
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from citeworth.text.stop_words import STOP_WORDS

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LETTERS = re.compile(r"[^a-z]")


@dataclass(frozen=True)
class BibWork:
    """What an entry is made from (a work of the index, as ``works.py`` reads it)."""

    title: str | None
    authors: tuple[str, ...]  # surnames
    year: int | None
    venue: str | None
    ids: Mapping[str, str]


def ascii_letters(text: str) -> str:
    """Lower-case ASCII letters of ``text``, accents dropped ('Müller-Lüdenscheidt' ->
    'mullerludenscheidt')."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return _LETTERS.sub("", plain)


def base_key(work: BibWork) -> str:
    surname = ascii_letters(work.authors[0]) if work.authors else ""
    words = (ascii_letters(word) for word in (work.title or "").split())
    word = next((w for w in words if len(w) > 2 and w not in STOP_WORDS), "")
    return f"{surname or 'anon'}{work.year or ''}{word}"


def entry_key(work: BibWork, taken: Iterable[str]) -> str:
    """The work's key, made unique against the keys ``taken`` (compared case-insensitively)."""
    taken = {key.lower() for key in taken}
    key = base_key(work)
    return next(key + suffix for suffix in _suffixes() if (key + suffix).lower() not in taken)


def _suffixes() -> Iterator[str]:
    """'', 'a' ... 'z', 'aa', 'ab' ..."""
    yield ""
    for length in itertools.count(1):
        yield from ("".join(letters) for letters in itertools.product(string.ascii_lowercase, repeat=length))


def bibtex_entry(work: BibWork, key: str) -> str:
    """``@article{key, ...}`` (``@misc`` without a venue), fields in a fixed order, one per line."""
    fields = [("author", " and ".join(_escape(name) for name in work.authors)),
              ("title", _escape(work.title or "")),
              ("journal" if work.venue else "", _escape(work.venue or "")),
              ("year", str(work.year or "")),
              ("doi", work.ids.get("doi", "")),
              ("pmid", work.ids.get("pmid", "")),
              ("pmcid", work.ids.get("pmcid", "")),
              ("eprint", work.ids.get("arxiv", "")),
              ("archiveprefix", "arXiv" if work.ids.get("arxiv") else "")]
    body = "".join(f",\n  {name} = {{{value}}}" for name, value in fields if name and value)
    return f"@{'article' if work.venue else 'misc'}{{{key}{body}\n}}\n"


def same_work_key(work: BibWork, entries: Mapping[str, Mapping[str, str]]) -> str | None:
    """The key of an entry of a ``.bib`` (``{key: its reference's ids}``) with the work's DOI or
    arXiv id: the work is already there."""
    for key, ids in entries.items():
        if any(work.ids.get(kind) and ids.get(kind) == work.ids[kind] for kind in ("doi", "arxiv")):
            return key
    return None


def _escape(text: str) -> str:
    return "".join(_SPECIAL.get(char, char) for char in " ".join(text.split()))
