"""How a reader's ``Block``s become ``Sentence``s (the types: ``citeworth.drafts``), which
sentences suppression directives silence, and a scored sentence's status.

Sentences are cut as the curation cuts them (``citeworth.text.sentences``: the same splitter,
citations never split off, a trailing citation-only "sentence" joined to the one before) and the
model reads each sentence as the curation wrote it to the dataset: citations removed
(``remove_citations``), whitespace normalised, hanging punctuation stripped.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

from citeworth.drafts import CITED, FLAGGED, OK, SUPPRESSED, Block, Directive, Draft, Sentence, Span
from citeworth.text import citations as cit
from citeworth.text.sentences import SentenceSplitter, attach_citation_only, join_across

IGNORE, OFF, ON = "ignore", "off", "on"
DIRECTIVES = (IGNORE, OFF, ON)
_WORD = re.compile(r"\w")
_CITE_KEY = re.compile(r"\{\{cite:([^{}]+)\}\}|(?<![\w.])@([\w][\w:.#$%&+?<>~/-]*)")


def sentences(drafts: Sequence[Draft], splitter: SentenceSplitter) -> list[list[Sentence]]:
    """The sentences of every block of ``drafts``, one list per block, in order."""
    blocks = [(draft, block) for draft in drafts for block in draft.blocks]
    splits = splitter.split(block.text for _, block in blocks)
    paragraphs: list[list[Sentence]] = []
    by_draft: dict[int, list[Sentence]] = {}
    for number, ((draft, block), bounds) in enumerate(zip(blocks, splits, strict=True)):
        paragraphs.append(_block_sentences(draft, block, bounds, number))
        by_draft.setdefault(id(draft), []).extend(paragraphs[-1])
    for draft in drafts:
        _apply_directives(draft.directives, by_draft.get(id(draft), []))
    return paragraphs


def _block_sentences(draft: Draft, block: Block, bounds: list[Span], paragraph: int) -> list[Sentence]:
    text = block.text
    bounds = join_across(bounds, sorted(block.cites + block.unbreakable))
    bounds = attach_citation_only(text, bounds, block.cites)
    found = []
    for start, end in bounds:
        if not _WORD.search(text, start, end):
            continue
        inside = [(a, b) for a, b in block.cites if start <= a < end]
        doc_start, doc_end = block.origin(start, end)
        cited = bool(inside) or _anchored(draft.cite_anchors, doc_start, doc_end) or (
            block.cited_by_patterns and cit.missed_citation(_blanked(text, start, end, block.unbreakable)))
        first, after = draft.locate(doc_start), draft.locate(doc_end)
        keys = tuple(key for a, b in inside for key in cite_keys(text[a:b]))
        found.append(Sentence(first.file, first.line, first.column, after.line, after.column,
                              model_text(block, start, end, inside), cited, doc_start, cite_keys=keys,
                              paragraph=paragraph))
    return found


def cite_keys(marker: str) -> list[str]:
    """The keys of a citation marker: ``{{cite:KEY}}`` (LaTeX, as the parser writes it), pandoc's
    ``[@key; @other]`` / ``@key``; none for a numeric ``[12]``."""
    return [m.group(1) or m.group(2).rstrip(".:") for m in _CITE_KEY.finditer(marker)]


def model_text(block: Block, start: int, end: int, cites: Sequence[Span]) -> str:
    """The sentence as the curation writes it to the dataset (citations removed), placeholders replaced."""
    text = block.text
    marks = [cit.Citation(a, b, text[a:b], (None,)) for a, b in cites]
    cleaned = cit.normalize_space(cit.remove_citations(text, start, end, marks))
    if marks:
        cleaned = cit.strip_hanging_punctuation(cleaned, cit.HANGING_PUNCTUATION, cit.MIN_SENTENCE_CHARS)
    for placeholder, replacement in block.replacements.items():
        cleaned = cleaned.replace(placeholder, replacement)
    return cit.normalize_space(cleaned)


def _blanked(text: str, start: int, end: int, spans: Sequence[Span]) -> str:
    """``text[start:end]`` with ``spans`` (code, maths: no citation can be there) blanked."""
    chars = list(text[start:end])
    for a, b in spans:
        for i in range(max(a, start), min(b, end)):
            chars[i - start] = " "
    return "".join(chars)


def _anchored(anchors: list[int], start: int, end: int) -> bool:
    """A citation outside the text (a footnote's) that sits within the sentence or right at its end."""
    index = bisect.bisect_left(anchors, start)
    return index < len(anchors) and anchors[index] <= end


def _apply_directives(directives: Iterable[Directive], found: Iterable[Sentence]) -> None:
    """``ignore`` suppresses the first sentence after it, ``off`` every sentence until ``on``."""
    directives = sorted((d for d in directives if d.word in DIRECTIVES), key=lambda d: d.offset)
    pending_ignore, off, i = False, False, 0
    for sentence in sorted(found, key=lambda s: s.offset):
        while i < len(directives) and directives[i].offset <= sentence.offset:
            word = directives[i].word
            pending_ignore = pending_ignore or word == IGNORE
            off = word == OFF if word in (OFF, ON) else off
            i += 1
        sentence.suppressed = off or pending_ignore
        pending_ignore = False


def decide(sentence: Sentence, threshold: float) -> str:
    """A scored sentence's status: cited sentences are never flagged."""
    if sentence.cited:
        return CITED
    if sentence.score is None or sentence.score < threshold:
        return OK
    return SUPPRESSED if sentence.suppressed else FLAGGED


def directive_warnings(draft: Draft) -> list[str]:
    return [f"{draft.locate(d.offset)}: unknown citeworth directive {d.word!r} (ignore, off or on)"
            for d in draft.directives if d.word not in DIRECTIVES]
