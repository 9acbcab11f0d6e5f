"""Plain-text drafts, and what Markdown drafts share with them: decoding, line/column lookup and
the curation's citation patterns.

Paragraphs are separated by blank lines (as ``citeworth predict`` reads text). A sentence already
cites when the curation's patterns (``citeworth.text.citations``: bracketed numbers, an
author-year parenthesis, a year in parentheses, "et al.") find a citation in it; bracketed numbers
and author-year parentheses are removed before the model reads the sentence, as curation removes
citation spans.
"""

from __future__ import annotations

import re

from citeworth.drafts import Block, Draft, Span
from citeworth.sources.latex import SourcePosition
from citeworth.sources.latex.project import SourceMap, decode
from citeworth.text import citations as cit

_BRACKETED = re.compile(r"\[[^\[\]]{1,300}\]|\([^()]{1,300}\)")
_BREAK = re.compile(r"\n[ \t]*\n\s*")


class UnreadableInput(ValueError):
    """An input that is no text draft (binary, say)."""


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 (else Latin-1), line ends as ``\\n``; UnreadableInput for binary data."""
    if b"\0" in data:
        raise UnreadableInput(f"{name}: binary data (a NUL byte), not a text draft")
    return decode(data)


def locator(text: str, name: str):
    """Offsets of ``text`` -> ``SourcePosition`` in file ``name``."""
    source_map = SourceMap([(0, name, 0)], {name: text})

    def locate(offset: int) -> SourcePosition:
        return source_map.position(offset)

    return locate


def pattern_citations(text: str) -> list[Span]:
    """Bracketed numbers ("[3]", "[1, 4-6]") and author-year parentheses ("(Smith et al., 2010)"),
    as the curation's ``citation_format`` recognises them."""
    return [m.span() for m in _BRACKETED.finditer(text)
            if cit.citation_format(m.group()) in ("numeric", "author_year")]


def read_plain(text: str, name: str) -> Draft:
    blocks = []
    for start, end in _paragraphs(text):
        piece = text[start:end]
        cites = pattern_citations(piece)
        blocks.append(Block(piece, cites, _shifted(start), cites, cited_by_patterns=True))
    return Draft(name, blocks, locator(text, name), files=[name])


def _shifted(base: int):
    def origin(start: int, end: int) -> Span:
        return base + start, base + end

    return origin


def _paragraphs(text: str) -> list[Span]:
    spans, start = [], 0
    for match in [*_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        if match:
            start = match.end()
    return spans
