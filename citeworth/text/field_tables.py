"""The tables under ``text/data/`` that say which CiteWorth field a source's own terms name.

- ``plos_fields.tsv``: PLOS taxonomy branches (and ``journal:<name>`` rows) -> field;
- ``elife_subjects.tsv``: eLife's subject headings -> field;
- ``journal_subjects.tsv``: a journal (by ISSN, else title) -> its broad subject;
- ``subject_fields.tsv``: a broad subject -> field.

Each is tab-separated with a header row, ``#`` comment lines and a ``why``/``note`` column. An empty
field means the term names no CiteWorth field. A table that names an unknown field, or lists one key
twice with different values, is refused when it is read.
"""

from __future__ import annotations

import functools
from pathlib import Path

CITEWORTH_FIELDS = (
    "Biology", "Medicine", "Engineering", "Chemistry", "Psychology",
    "Computer Science", "Materials Science", "Economics", "Mathematics", "Physics",
)
DATA = Path(__file__).parent / "data"
PLOS_TABLE = DATA / "plos_fields.tsv"
ELIFE_TABLE = DATA / "elife_subjects.tsv"
JOURNAL_TABLE = DATA / "journal_subjects.tsv"
SUBJECT_TABLE = DATA / "subject_fields.tsv"
JOURNAL = "journal:"  # a PLOS table row naming a journal, not a taxonomy term


def rows(path: Path) -> list[tuple[int, list[str]]]:
    """``(line number, columns)`` of every data row (header and comments left out)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(number, line.split("\t")) for number, line in enumerate(lines[1:], start=2)
            if line.strip() and not line.startswith("#")]


def keyed(path: Path, pairs: list[tuple[int, object, str]], check_field: bool = True) -> dict:
    """``{key: value or None}`` from ``(line number, key, value)``; refuses unknown fields and keys
    listed twice with different values."""
    table: dict = {}
    for number, key, value in pairs:
        if check_field and value and value not in CITEWORTH_FIELDS:
            raise ValueError(f"{path.name}:{number}: {value!r} is not a CiteWorth field")
        if table.get(key, value or None) != (value or None):
            raise ValueError(f"{path.name}:{number}: {key!r} is listed twice with different values")
        table[key] = value or None
    return table


def components(path: str) -> tuple[str, ...]:
    """A PLOS taxonomy path's terms, lower-cased."""
    return tuple(part.strip().lower() for part in path.split("/"))


@functools.cache
def plos_table() -> dict[tuple[str, ...], str | None]:
    """Lower-cased term components (or ``("journal:<name>",)``) -> CiteWorth field or None."""
    def key(term: str) -> tuple[str, ...]:
        return (term.lower(),) if term.startswith(JOURNAL) else components(term)

    return keyed(PLOS_TABLE, [(number, key(term), field) for number, (term, field, _why) in rows(PLOS_TABLE)])


@functools.cache
def elife_table() -> dict[str, str | None]:
    """Lower-cased eLife heading -> CiteWorth field or None."""
    return keyed(ELIFE_TABLE, [(number, heading.strip().lower(), field)
                               for number, (heading, field, _why) in rows(ELIFE_TABLE)])


@functools.cache
def subject_table() -> dict[str, str | None]:
    """A journal's broad subject -> CiteWorth field or None."""
    return keyed(SUBJECT_TABLE, [(number, subject, field)
                                 for number, (subject, field, _why) in rows(SUBJECT_TABLE)])


@functools.cache
def journal_table() -> dict[str, str]:
    """``ISSN`` and ``title:<normalised title>`` -> the journal's broad subject (every subject listed in
    the subject table)."""
    pairs = []
    for number, (title, issns, subject, _note) in rows(JOURNAL_TABLE):
        if subject not in subject_table():
            raise ValueError(f"{JOURNAL_TABLE.name}:{number}: subject {subject!r} is not in "
                             f"{SUBJECT_TABLE.name}")
        pairs += [(number, key, subject) for key in (title_key(title), *filter(None, issns.split(";")))]
    return keyed(JOURNAL_TABLE, pairs, check_field=False)


def title_key(title: str) -> str:
    """A journal title compared without case, spacing or a leading "The"."""
    words = " ".join(title.lower().split()).removeprefix("the ")
    return f"title:{words}"
