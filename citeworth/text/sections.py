"""Permissible section titles (Appendix A of the paper) and title normalisation.

Parsers keep section numbering and typography ("II. PRELIMINARIES", "3.1 Related Work:",
"A. Methods"), so titles are compared after normalisation: lower case, numbering removed,
punctuation turned into spaces, whitespace collapsed.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable
from importlib import resources

# Leading numbering: "2.", "3.1", "3.1.2)", "II.", "iv", "A.", "(b)"; roman numerals and single
# letters only as a whole word, so "Discussion" or "Analysis" keep their first letters.
_NUMBERING = re.compile(r"^\(?(?:\d+(?:\.\d+)*|[ivxlcdm]+|[a-z])[.):]*(?:\s+|$)")
_NON_WORD = re.compile(r"[^\w]+")


@functools.lru_cache(maxsize=1 << 16)  # titles repeat across a paper's paragraphs and across papers
def normalize_title(title: str | None) -> str:
    """Compare-ready form of a section title, e.g. ``"II. RELATED  WORK:"`` -> ``"related work"``."""
    text = (title or "").strip().lower().replace("&", " and ")
    text = _NUMBERING.sub("", text, count=1)
    return " ".join(_NON_WORD.sub(" ", text).split())


def appendix_a_titles() -> list[str]:
    """The paper's permissible section titles, shipped as package data."""
    raw = resources.files("citeworth.text").joinpath("data/permissible_sections.txt").read_text("utf-8")
    return [line.strip() for line in raw.splitlines() if line.strip() and not line.startswith("#")]


class SectionFilter:
    """Is a paragraph's section title one of the permissible titles (after normalisation)?

    An entry with ``*`` or ``?`` is a shell-style pattern matched against the normalised title
    (write it in that form, e.g. ``"*methods"``; ``"*"`` permits every section)."""

    def __init__(self, titles: Iterable[str] | None = None):
        titles = list(appendix_a_titles() if titles is None else titles)
        self.patterns = tuple(" ".join(t.lower().split()) for t in titles if _is_pattern(t))
        self.titles = frozenset(normalize_title(t) for t in titles if not _is_pattern(t))

    def permits(self, title: str | None) -> bool:
        normal = normalize_title(title)
        return normal in self.titles or any(fnmatch.fnmatchcase(normal, p) for p in self.patterns)


def _is_pattern(title: str) -> bool:
    return "*" in title or "?" in title
