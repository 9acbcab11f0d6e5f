"""The sentences of a paragraph that cite, found without the sentence splitter: the contexts in which
the cited-works index (``works.py``) and the corpus suggestions (``corpus.py``) see a work cited.

Splitting every paragraph of a corpus with the curation's splitter (scispacy + pysbd, about 1,000
sentences a second) would cost minutes per thousand papers; a citing sentence only needs its two
ends. A boundary is a ``.``, ``!`` or ``?`` (closing quotes and brackets after it allowed) followed
by white space and a capital letter, a digit or an opening bracket, unless the word before the
stop is a common abbreviation ("et al.", "Fig.", "e.g.", an initial) or the boundary falls inside a
citation marker ("(Smith et al. 2010)" is never cut). A sentence is at most ``REACH`` characters
either side of its first and last citation. Its markers are removed as the curation removes them
(neighbouring markers merged, "[1, 2]" whole, brackets included).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from citeworth.core.paper import CitationSpan
from citeworth.text.citations import merge_citations, normalize_space, remove_citations

REACH = 300  # characters kept either side of a sentence's citations when no boundary is found
_BOUNDARY = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])")
_WORD_BEFORE = re.compile(r"([^\W\d_][\w.]*)\.?$")
_MARKER_GAP = re.compile(r"[\s,;\u2013-]*")  # between two markers of one citation: curate's merge_gap
_ABBREVIATIONS = frozenset({
    "al", "e.g", "i.e", "fig", "figs", "eq", "eqs", "ref", "refs", "cf", "vs", "ca", "approx",
    "no", "nos", "sp", "spp", "resp", "viz", "ed", "eds", "vol", "pp", "dr", "prof", "st", "mr", "mrs",
    "ms", "jr", "sr", "inc", "ltd", "co", "corp", "dept", "univ", "suppl", "tab", "sect", "chap",
})


def boundaries(text: str, spans: Sequence[CitationSpan] = ()) -> list[int]:
    """Offsets where a sentence of ``text`` starts (0 first), none inside a citation marker."""
    starts = [0]
    for match in _BOUNDARY.finditer(text):
        stop = match.start()
        if any(span.start <= stop < span.end for span in spans):
            continue
        word = _WORD_BEFORE.search(text, max(0, stop - 20), stop + 1)
        if word and (word.group(1).lower().rstrip(".") in _ABBREVIATIONS or len(word.group(1)) == 1):
            continue
        starts.append(match.end())
    return starts


def sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence around ``text[start:end]`` (a citation) starts and ends, at most ``REACH``
    characters either side of it."""
    starts = boundaries(text)
    first = max(position for position in starts if position <= start)
    after = next((position for position in starts if position >= end), len(text))
    return max(first, start - REACH), min(after, end + REACH)


def citing_sentences(text: str, spans: Sequence[CitationSpan]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each sentence of the paragraph ``text`` that has a citation marker among ``spans``: its text
    with every citation removed (as the dataset's samples have it), and the bibliography entries its
    markers cite, in order, each once. Sentences whose markers cite no entry are left out."""
    spans = sorted(spans, key=lambda span: span.start)
    if not spans:
        return
    starts = boundaries(text, spans)
    ends = [*starts[1:], len(text)]
    position = 0
    for start, end in zip(starts, ends, strict=True):
        inside = []
        while position < len(spans) and spans[position].start < end:
            if spans[position].start >= start:
                inside.append(spans[position])
            position += 1
        ref_ids = tuple(dict.fromkeys(ref_id for span in inside for ref_id in span.ref_ids))
        if not ref_ids:
            continue
        start, end = max(start, inside[0].start - REACH), min(end, inside[-1].end + REACH)
        cites = merge_citations(text, inside, _MARKER_GAP)
        if cleaned := normalize_space(remove_citations(text, start, end, cites)):
            yield cleaned, ref_ids
