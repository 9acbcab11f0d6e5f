"""Paragraphs out of XML markup (PMC JATS, GROBID TEI): shared by the ``jats`` and ``tei`` readers.

A paragraph element is flattened into plain text -- inline markup (italics, sub/superscripts,
links) keeps its text, floats (figures, tables, footnotes) are dropped, formulas become
``{{formula:ID}}`` placeholders (the curation rejects such paragraphs as it does unarXive's, since
the text lost the formula) -- and every citation or figure/table/formula reference becomes a
span whose offsets are taken while the text is built, so they are exact by construction.

Citation markers are made to read as the article prints them: a citation linking only its year
takes the author names that fill the marker before it (Frontiers' JATS links "(Green et al.,
<xref>2002</xref>; ...": the span becomes "Green et al., 2002"); citations separated only by
commas, semicolons, dashes or spaces (``[1]–[3]``, ``[2], [5]``) become adjacent spans, each
taking the separator before it, and brackets directly around such a run are included
(``[<xref>3</xref>]`` -> ``[3]``, ``(<xref>Smith et al., 2010</xref>)`` -> ``(Smith et al., 2010)``),
so removing the spans removes the whole marker and the curation's format check sees it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from citeworth.core.paper import Paper
from citeworth.sources.base import BadRecord, RecordError, Shard, guarded
from citeworth.sources.spans import CITE, RawSpan

_WHITESPACE = re.compile(r"\s+")
_SEPARATOR = re.compile(r"[\s,;\-\u2010-\u2014\u2212]*")  # between citations of one marker
_CLOSERS = {"[": "]", "(": ")"}
# A citation that links only its year, and the author names that may fill its marker before it, from
# the marker's opening bracket or semicolon on: "Green", "Green et al.", "Stergiopoulos and de Wit".
_YEAR_ONLY = re.compile(r"[12]\d{3}[a-z]?")
_NAME = r"(?:[a-z]{1,3}\s+)?[^\W\d_][\w'’\-]*"
_AUTHORS = re.compile(rf"{_NAME}(?:\s+et\.?\s*al\.?|(?:,?\s+(?:and|&)\s+|\s+){_NAME})?,?\s*")
_MARKER_OPEN = re.compile(r"[(\[;]")
_UNSAFE_ID = re.compile(r"[^\w.\-]+")
# expat's errors for input that ends too soon: no element found (open elements at the end), unclosed
# token, partial character, unclosed CDATA section.
_ENDED_EARLY = frozenset({3, 5, 6, 20})


class Markup(NamedTuple):
    """What a reader makes of one element inside a paragraph (``None`` = just its text)."""

    action: str  # SKIP | SPAN | PLACEHOLDER | BLOCK
    kind: str = ""  # span kind: CITE, "figure", "table", "formula", ...
    ref_id: str | None = None


SKIP = "skip"  # drop the element and its content (its tail text stays)
SPAN = "span"  # its text is a span of ``kind``
PLACEHOLDER = "placeholder"  # replaced by ``{{kind:ref_id}}``, a span of ``kind``, set off by spaces
BLOCK = "block"  # its text, set off by spaces (list items, line breaks)
# Its text, set off by a space from a WORD element it directly follows: the parts of a name a source
# writes as adjacent elements with nothing between them (Pensoft's ``<named-content>`` genus ``D.``
# and species ``durum`` -> "D. durum"); punctuation after it stays attached.
WORD = "word"
# Its text; a signed number right after a digit is an exponent, written ``^N`` (``10<sup>6</sup>`` ->
# "10^6", not "106", another number). A superscript with markup inside (a citation) is just its text.
EXPONENT = "exponent"
_EXPONENT = re.compile(r"[\-\u2212\u2013+]?\d+(?:\.\d+)?")
# Typographic ligatures a few publishers leave in their text (ﬁ, ﬂ, ﬀ, ﬃ, ﬄ, ﬅ, ﬆ): their letters.
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "st", "\ufb06": "st"})

Classifier = Callable[[ET.Element], Markup | None]


def local_name(element: ET.Element) -> str:
    """The tag without its namespace (TEI is namespaced, JATS usually not)."""
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def text_of(element: ET.Element | None) -> str:
    """All text inside ``element``, whitespace collapsed ("" for None)."""
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def paragraphs_text(element: ET.Element | None) -> str:
    """The text of an element made of paragraphs (an abstract), one space between paragraphs, so
    that titles and paragraphs do not run together ("" for None)."""
    if element is None:
        return ""
    paragraphs = [text for p in element.iter() if local_name(p) == "p" and (text := text_of(p))]
    return " ".join(paragraphs) if paragraphs else text_of(element)


def read_xml_files(
    shard: Shard, convert: Callable[[ET.Element, str, Shard], Paper]
) -> Iterator[Paper | BadRecord]:
    """One Paper per XML file of the shard; a file that is not well-formed XML, or that
    ``convert`` fails on, is one BadRecord located by its name."""
    for path in shard.paths:
        data = Path(path).read_bytes()
        location = f"file {Path(path).name}"
        yield guarded(shard, location, data, _convert_file, convert, data, location, path, shard)


def _convert_file(convert: Callable[[ET.Element, str, Shard], Paper], data: bytes, location: str, path: str,
                  shard: Shard) -> Paper:
    return convert(parse_xml(data, location), path, shard)


def parse_xml(data: bytes, location: str) -> ET.Element:
    """The root element; expat does not fetch DTDs or external entities. A file that ends before its
    root element does (a cut transfer, an empty file) is ``truncated_xml``, any other parse error
    ``malformed_xml``."""
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        reason = "truncated_xml" if exc.code in _ENDED_EARLY else "malformed_xml"
        raise RecordError(reason, f"{location}: {exc}") from exc


def require_root(root: ET.Element, name: str, path: str) -> None:
    """A file of another XML format is a bad record, not an empty paper."""
    if local_name(root) != name:
        raise RecordError("unexpected_root", f"{Path(path).name}: the root element is <{local_name(root)}>, "
                                             f"not <{name}>")


def placeholder_id(value: str | None) -> str:
    """An id safe inside ``{{kind:ID}}`` (no braces or spaces)."""
    return _UNSAFE_ID.sub("_", value or "").strip("_") or "unnamed"


def flatten(element: ET.Element, classify: Classifier) -> tuple[str, list[RawSpan]]:
    """The paragraph's text (whitespace runs collapsed, stripped) and its spans, citations grouped.

    The markup is walked with an explicit stack, not recursion: inline elements nested thousands
    deep (``<italic><italic>...``) are well-formed XML and must not exhaust the interpreter's stack.
    """
    builder = _TextBuilder()
    spans: list[RawSpan] = []
    todo: list[tuple[str, ET.Element | str | None]] = [(_CONTENT, element)]
    while todo:
        step, item = todo.pop()
        if step == _TEXT:
            builder.add(item)
        elif step == _SPACE:
            builder.space()
        elif step == _WORD_END:
            builder.word_end = builder.length
        elif step == _CONTENT:  # the element's own text, then each child (as classified) and its tail
            builder.add(item.text)
            for child in reversed(item):
                todo += [(_TEXT, child.tail), (_CHILD, child)]
        else:
            todo += _child(item, classify, builder, spans)
    return builder.text, group_citations(builder.text, spans)


_TEXT, _SPACE, _CONTENT, _CHILD, _WORD_END = "text", "space", "content", "child", "word_end"


def _child(element: ET.Element, classify: Classifier, builder: _TextBuilder,
           spans: list[RawSpan]) -> list[tuple[str, ET.Element | None]]:
    """Handle one child now, or return the steps (last first) that handle its content."""
    markup = classify(element)
    if markup is None:
        return [(_CONTENT, element)]
    if markup.action == BLOCK:
        builder.space()
        return [(_SPACE, None), (_CONTENT, element)]
    if markup.action == WORD:
        if builder.length == builder.word_end:  # another word element ended just here
            builder.space()
        return [(_WORD_END, None), (_CONTENT, element)]
    if markup.action == EXPONENT:
        number = (element.text or "").strip()
        if len(element) == 0 and builder.ends_with_digit() and _EXPONENT.fullmatch(number):
            builder.add("^")
        return [(_CONTENT, element)]
    if markup.action == SPAN:
        start = builder.position()
        builder.add("".join(element.itertext()))
        if builder.length > start:
            spans.append(RawSpan(start, builder.length, markup.kind, ref_id=markup.ref_id))
        elif markup.kind == CITE:  # a citation the stylesheet renders: keep its exact place
            _placeholder(builder, spans, markup, space=False)
    elif markup.action == PLACEHOLDER:
        _placeholder(builder, spans, markup, space=True)
    elif markup.action != SKIP:
        raise ValueError(f"unknown markup action {markup.action!r}")
    return []


def nested(
    root: ET.Element, item: str, container: str
) -> Iterator[tuple[ET.Element, tuple[ET.Element, ...]]]:
    """Every ``item`` element reached from ``root`` through ``container`` elements only (JATS
    ``<sec>``s, TEI ``<div>``s), in document order, with its containers (outermost first).
    Iterative, so no nesting depth exhausts the interpreter's stack."""
    path: list[ET.Element] = []
    children = [iter(root)]
    while children:
        for child in children[-1]:
            name = local_name(child)
            if name == item:
                yield child, tuple(path)
            elif name == container:
                path.append(child)
                children.append(iter(child))
                break
        else:
            children.pop()
            if children:
                path.pop()


def _placeholder(builder: _TextBuilder, spans: list[RawSpan], markup: Markup, space: bool) -> None:
    if space:
        builder.space()
    start = builder.position()
    builder.add(f"{{{{{markup.kind}:{placeholder_id(markup.ref_id)}}}}}")
    spans.append(RawSpan(start, builder.length, markup.kind, ref_id=markup.ref_id))
    if space:
        builder.space()


class _TextBuilder:
    """Text assembled from pieces with every whitespace run collapsed to one space and none at
    either end. A space is written only when text follows it, so ``position()`` taken before a
    piece is where the piece's first character lands."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.length = 0
        self._pending_space = False
        self.word_end = -1  # where the text of the last WORD element ended

    def space(self) -> None:
        self._pending_space = self.length > 0

    def position(self) -> int:
        return self.length + int(self._pending_space)

    def ends_with_digit(self) -> bool:
        """Does the text so far end in a digit, with no space pending after it?"""
        return bool(self._parts) and not self._pending_space and self._parts[-1][-1].isdigit()

    def add(self, text: str | None) -> None:
        if not text:
            return
        text = _WHITESPACE.sub(" ", text).translate(_LIGATURES)
        if text.startswith(" "):
            self.space()
        if core := text.strip(" "):
            if self._pending_space:
                self._write(" ")
            self._write(core)
            self._pending_space = False
        if text.endswith(" "):
            self.space()

    def _write(self, text: str) -> None:
        self._parts.append(text)
        self.length += len(text)

    @property
    def text(self) -> str:
        return "".join(self._parts)


def group_citations(text: str, spans: list[RawSpan]) -> list[RawSpan]:
    """Citation spans joined into markers as printed (see the module docstring); others unchanged."""
    cites = _with_author_names(text, sorted((s for s in spans if s.kind == CITE), key=lambda s: s.start))
    grouped: list[RawSpan] = []
    run: list[RawSpan] = []
    for span in cites:
        if run and _SEPARATOR.fullmatch(text, run[-1].end, span.start):
            run.append(span._replace(start=run[-1].end))
        else:
            grouped += _bracketed(text, run)
            run = [span]
    grouped += _bracketed(text, run)
    return [s for s in spans if s.kind != CITE] + grouped


def _with_author_names(text: str, cites: list[RawSpan]) -> list[RawSpan]:
    """Each citation that links only its year, extended back over the author names (a capitalised
    name first) between it and its marker's opening bracket or semicolon, none of an earlier
    citation's text; the others as they are."""
    extended, previous_end = [], 0
    for span in cites:
        if _YEAR_ONLY.fullmatch(text, span.start, span.end):
            opens = [m.end() for m in _MARKER_OPEN.finditer(text, previous_end, span.start)]
            names = text[opens[-1]:span.start] if opens else ""
            names_start = span.start - len(names.lstrip())
            if names.strip()[:1].isupper() and _AUTHORS.fullmatch(text, names_start, span.start):
                span = span._replace(start=names_start)
        extended.append(span)
        previous_end = span.end
    return extended


def _bracketed(text: str, run: list[RawSpan]) -> list[RawSpan]:
    """``run`` with the brackets directly around it (whitespace aside) taken into its ends."""
    if not run:
        return run
    before = len(text[:run[0].start].rstrip()) - 1
    after = len(text) - len(text[run[-1].end:].lstrip())
    if before < 0 or after >= len(text) or _CLOSERS.get(text[before]) != text[after]:
        return run
    run = list(run)
    run[0] = run[0]._replace(start=before)
    run[-1] = run[-1]._replace(end=after + 1)
    return run
