"""Finding a paper's related-work section and its paragraphs.

A heading matches when, normalised as the curation does (numbering, case and punctuation dropped:
"2. RELATED WORK:" -> "related work"), it -- or one of its parts joined by "and" ("Background and
Related Work", "Context and related work") -- fully matches one of ``titles`` (regular
expressions). "Background Theory" or "Algebraic background" do not match "background": a part
must match whole. Every level of a paragraph's heading path is looked at (``Paragraph.headings``:
"1.2 Related works" inside the Introduction counts). Earlier patterns win ("Related Work" over
"Background" when a paper has both), then the earlier paragraph, then the outer level.

The section runs from its first paragraph up to the next section of its level: while paragraphs
stay under the matched heading, or are numbered below it ("2.1" under "2"), or -- when it is a
numbered top-level section and the source left a subsection's number off (GROBID does) -- carry
no number at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from citeworth.core.paper import Paragraph
from citeworth.text.sections import normalize_title

# Kobayashi et al. take titles starting with "Related Work" or "Related Study"; the issue adds
# prior work, background and literature reviews.
DEFAULT_TITLES = (
    r"(?:further |other |more )?related works?",
    r"related (?:studies|study|research|literature|approaches)",
    r"(?:prior|previous) (?:works?|studies|research|approaches)",
    r"literature (?:review|survey)",
    r"review of (?:the )?(?:related )?literature",
    r"state of the art",
    r"background",
)


@dataclass(frozen=True)
class Section:
    title: str  # the matched heading as the source prints it
    number: str | None
    paragraphs: tuple[Paragraph, ...]


def heading_path(paragraph: Paragraph) -> tuple[str, ...]:
    return paragraph.headings or (paragraph.section,)


class SectionFinder:
    def __init__(self, titles: Sequence[str] = DEFAULT_TITLES):
        self.patterns = [re.compile(title, re.IGNORECASE) for title in titles]

    def rank(self, title: str) -> int | None:
        """The index of the first pattern the title matches, or None."""
        normal = normalize_title(title)
        parts = [normal, *(part.strip() for part in normal.split(" and "))]
        for index, pattern in enumerate(self.patterns):
            if any(pattern.fullmatch(part) for part in parts if part):
                return index
        return None

    def find(self, paragraphs: Sequence[Paragraph]) -> Section | None:
        """The best-ranked related-work section of a paper (see the module docstring), or None."""
        best: tuple[int, int, int] | None = None  # (rank, position, level)
        for position, paragraph in enumerate(paragraphs):
            for level, title in enumerate(heading_path(paragraph)):
                rank = self.rank(title) if title else None
                if rank is not None and (best is None or rank < best[0]):
                    best = (rank, position, level)
        if best is None:
            return None
        _, start, level = best
        prefix = heading_path(paragraphs[start])[:level + 1]
        number = _top_number(paragraphs[start].sec_number) if level == 0 else None
        end = start + 1
        while end < len(paragraphs) and _continues(paragraphs[end], prefix, number):
            end += 1
        return Section(prefix[-1], number, tuple(paragraphs[start:end]))


def _top_number(sec_number: str | None) -> str | None:
    """"2" of "2", "2.1" or "II"; None when unnumbered (unarXive writes "-1" for that)."""
    number = (sec_number or "").strip().rstrip(".")
    if not number or number == "-1":
        return None
    return number.split(".")[0]


def _continues(paragraph: Paragraph, prefix: tuple[str, ...], number: str | None) -> bool:
    if heading_path(paragraph)[:len(prefix)] == prefix:
        return True
    if number is None:
        return False
    own = (paragraph.sec_number or "").strip().rstrip(".")
    return own.startswith(number + ".") or not _top_number(own)
