"""Citation anchors -> bibliography entries, the way s2orc-doc2json reads GROBID output, and more.

A source links most citation markers to their entry (GROBID's ``target="#b3"``, JATS's ``rid``);
``resolve_citations`` fills in what it leaves out, for papers of any reader:

- a marker without a link (or with a link to no entry) is resolved by its printed number
  ("[5]", "4]", "[1, 4-6]") or, for author-year styles, by first-author surname + year
  ("(Smith et al., 2010a)");
- a printed range over two markers ("[1]–[4]", GROBID writing ``<ref>[1]</ref>–<ref>[4]</ref>``)
  cites the entries between its ends as well: the second marker's ``cites`` gets 2, 3 and 4;
- a callout split across markers ("[3," + "4]") needs nothing more: each part has its number.

A printed number is the entry's position in the bibliography (1-based), unless the paper's own
links say otherwise: every linked marker that prints exactly one number teaches the number ->
entry map, and list order is trusted only where no link contradicts it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping

from citeworth.core.paper import BibEntry, CitationSpan, Paragraph

# The widest printed range expanded ("[1]–[30]"); wider ones are more likely misparsed than real.
MAX_RANGE = 30
_DASHES = "\\-\u2010\u2011\u2012\u2013\u2014\u2212"  # escaped "-" first: not a class range
_BRACKETS = r"[\s\[\]()]*"
_SEPARATOR = rf"{_BRACKETS}[,;{_DASHES}]{_BRACKETS}"
_NUMERIC = re.compile(rf"[\s\[\](),;{_DASHES}]*\d{{1,3}}(?:{_SEPARATOR}\d{{1,3}})*[\s\[\](),;{_DASHES}]*")
_ITEM = re.compile(rf"(\d{{1,3}})(?:{_BRACKETS}[{_DASHES}]{_BRACKETS}(\d{{1,3}}))?")
_RANGE_GAP = re.compile(rf"[\])]?\s*[{_DASHES}]\s*[\[(]?")
_YEAR = re.compile(r"\b([12]\d{3})([a-z]?)\b")
_NAME_END = re.compile(r"\bet\.?\s*al\b|\band\b|&|,|\(|\d", re.IGNORECASE)
_LEAD_WORDS = re.compile(r"^(?:\s*(?:e\.g\.|i\.e\.|see|cf\.?|also)[\s,]*)+", re.IGNORECASE)


def name_key(name: str) -> str:
    """A surname in the form anchors and entries are compared in: letters only, accents and case
    dropped ("De Marchis" -> "demarchis", "Müller" -> "muller")."""
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(c for c in decomposed if c.isalpha() and not unicodedata.combining(c)).casefold()


@functools.lru_cache(maxsize=4096)
def printed_numbers(text: str) -> tuple[int, ...]:
    """The reference numbers a numeric marker prints, ranges expanded ("[1, 4-6]" -> 1, 4, 5, 6);
    () for a marker that is not purely numeric (author-year, "Fig. 2"). Cached: every marker is
    read when learning a paper's numbers, resolving it and checking ranges, and "[3]" recurs in
    paper after paper."""
    if not _NUMERIC.fullmatch(text):
        return ()
    numbers: list[int] = []
    for match in _ITEM.finditer(text):
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        numbers += range(first, last + 1) if 0 < last - first <= MAX_RANGE else dict.fromkeys((first, last))
    return tuple(numbers)


def name_years(text: str) -> list[tuple[str, int, str]]:
    """``(surname key, year, letter)`` for each author-year citation in ``text``
    ("(Smith et al., 2010a; Lee 2011)" -> [("smith", 2010, "a"), ("lee", 2011, "")])."""
    found = []
    for part in text.split(";"):
        year = _YEAR.search(part)
        if not year:
            continue
        name = _LEAD_WORDS.sub("", part[:year.start()].strip(" (["))
        name = name[:m.start()] if (m := _NAME_END.search(name)) else name
        if key := name_key(name):
            found.append((key, int(year.group(1)), year.group(2)))
    return found


class Bibliography:
    """A paper's entries as its markers name them: by printed number and by surname + year."""

    def __init__(self, entries: Mapping[str, BibEntry], paragraphs: Iterable[Paragraph] = ()):
        self.entries = entries
        self._numbers = self._learn_numbers(paragraphs)
        # the smallest number printed for an entry (largest first, so smaller ones overwrite)
        self._number_of = {ref_id: number for number, ref_id in sorted(self._numbers.items(), reverse=True)}
        self._by_name_year: dict[tuple[str, int], list[str]] = defaultdict(list)
        for ref_id, entry in entries.items():
            if entry.authors and entry.year:
                self._by_name_year[(name_key(entry.authors[0]), entry.year)].append(ref_id)

    def _learn_numbers(self, paragraphs: Iterable[Paragraph]) -> dict[int, str]:
        learned: dict[int, str] = {}
        for paragraph in paragraphs:
            for span in paragraph.cite_spans:
                numbers = printed_numbers(span.text)
                if len(numbers) == 1 and span.ref_id in self.entries:
                    learned.setdefault(numbers[0], span.ref_id)
        in_order = list(self.entries)
        if all(n <= len(in_order) and in_order[n - 1] == ref_id for n, ref_id in learned.items()):
            return {n: ref_id for n, ref_id in enumerate(in_order, 1)}
        return learned

    def by_number(self, number: int) -> str | None:
        return self._numbers.get(number)

    def number_of(self, ref_id: str) -> int | None:
        """The number the paper prints for an entry (from its links or list position)."""
        return self._number_of.get(ref_id)

    def by_name_year(self, surname: str, year: int, letter: str = "") -> str | None:
        """The one entry whose first author and year match (a letter picks among several)."""
        candidates = [ref_id for (name, entry_year), ids in self._by_name_year.items()
                      if entry_year == year and len(name) >= 2 and surname.endswith(name) for ref_id in ids]
        if len(candidates) == 1:
            return candidates[0]
        index = ord(letter) - ord("a") if letter else -1
        return candidates[index] if 0 <= index < len(candidates) else None

    def resolve_text(self, text: str) -> tuple[str, ...]:
        """The entries a marker's text names, by number or by surname + year (unresolved ones left out)."""
        numbers = printed_numbers(text)
        found = [self.by_number(n) for n in numbers] if numbers else [
            self.by_name_year(*name_year) for name_year in name_years(text)]
        return tuple(dict.fromkeys(ref_id for ref_id in found if ref_id))


def resolve_citations(paragraphs: list[Paragraph], entries: Mapping[str, BibEntry]) -> list[Paragraph]:
    """The paragraphs with every citation span's entries filled in (see the module docstring)."""
    bibliography = Bibliography(entries, paragraphs)
    return [_resolve_paragraph(paragraph, bibliography) for paragraph in paragraphs]


def _resolve_paragraph(paragraph: Paragraph, bibliography: Bibliography) -> Paragraph:
    if not paragraph.cite_spans:
        return paragraph
    spans = list(paragraph.cite_spans)
    resolved = []
    for index, span in enumerate(spans):
        ids = _span_entries(span, bibliography)
        if ids and index and (middle := _range_middle(paragraph.text, spans[index - 1], span, bibliography)):
            ids = tuple(dict.fromkeys(middle + ids))
        resolved.append(_with_entries(span, ids))
    if resolved == spans:
        return paragraph
    return dataclasses.replace(paragraph, cite_spans=tuple(resolved))


def _span_entries(span: CitationSpan, bibliography: Bibliography) -> tuple[str, ...]:
    """The span's linked entries; where it has none in the bibliography (or prints more numbers
    than it links), the entries its text names."""
    linked = tuple(ref_id for ref_id in span.ref_ids if ref_id in bibliography.entries)
    named = bibliography.resolve_text(span.text)
    if not linked or (len(named) > len(linked) and set(linked) <= set(named)):
        return named
    return linked


def _range_middle(text: str, before: CitationSpan, span: CitationSpan,
                  bibliography: Bibliography) -> tuple[str, ...]:
    """The entries strictly inside a range printed across two markers ("[1]–[4]" -> 2, 3)."""
    first, last = printed_numbers(before.text), printed_numbers(span.text)
    if not first or not last or not 1 < last[0] - first[-1] <= MAX_RANGE:
        return ()
    gap_start = before.start + max(i for i, c in enumerate(before.text) if c.isdigit()) + 1
    gap_end = span.start + min(i for i, c in enumerate(span.text) if c.isdigit())
    if not _RANGE_GAP.fullmatch(text, gap_start, gap_end):
        return ()
    middle = (bibliography.by_number(n) for n in range(first[-1] + 1, last[0]))
    return tuple(ref_id for ref_id in middle if ref_id)


def _with_entries(span: CitationSpan, ids: tuple[str, ...]) -> CitationSpan:
    if not ids or ids == span.ref_ids:
        return span
    if span.ref_id is None and len(ids) == 1:
        return dataclasses.replace(span, ref_id=ids[0], cites=())
    return dataclasses.replace(span, ref_id=span.ref_id or ids[0], cites=ids)
