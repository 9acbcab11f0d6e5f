"""Author surnames written in a sentence ("Smith et al. showed", "as Pemantle and Rivin
conjectured"): the strongest single clue to which entry a sentence means.

A surname counts when it appears in the sentence as a capitalised word (accents and case folded
when compared): the first author's is worth 1, a co-author's 0.5, and a year in the sentence that
is the entry's adds 0.25 to an entry already matched by name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

FIRST_AUTHOR, CO_AUTHOR, SAME_YEAR = 1.0, 0.5, 0.25
_CAPITALISED = re.compile(r"\b[A-Z\u00C0-\u024F][\w'\u2019-]+")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)[a-z]?\b")


def fold(word: str) -> str:
    """Accents dropped, case folded: 'Müller' and 'Muller' match."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).casefold()


def surname_key(surname: str) -> str:
    """The compared part of a surname: its last word ('van der Berg' -> 'berg'), folded."""
    words = surname.replace("-", " ").split()
    return fold(words[-1]) if words else ""


class AuthorIndex:
    """Candidates by the folded surnames of their authors."""

    def __init__(self, authors: Sequence[Sequence[str]], years: Sequence[int | None]):
        self.size = len(authors)
        self.years = list(years)
        self.by_surname: dict[str, list[tuple[int, float]]] = {}
        for index, names in enumerate(authors):
            for position, name in enumerate(names):
                key = surname_key(name)
                if len(key) > 1:
                    self.by_surname.setdefault(key, []).append(
                        (index, FIRST_AUTHOR if position == 0 else CO_AUTHOR))

    def scores(self, sentence: str) -> np.ndarray:
        scores = np.zeros(self.size)
        for word in {fold(w) for w in _CAPITALISED.findall(sentence)}:
            for key in (word, *word.split("-")):
                for index, weight in self.by_surname.get(key, ()):
                    scores[index] = max(scores[index], weight)
        years = {int(y) for y in _YEAR.findall(sentence)}
        if years:
            for index in np.flatnonzero(scores):
                scores[index] += SAME_YEAR * (self.years[index] in years)
        return scores
