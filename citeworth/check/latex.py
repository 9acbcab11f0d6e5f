"""LaTeX drafts through the project's one LaTeX parser (``citeworth.sources.latex``).

The parser flattens ``\\input``/``\\include`` from the main file, keeps running text only (no
preamble, maths, floats, captions, footnotes, comments, verbatim or bibliography) with
``{{cite:KEY}}`` for every natbib/biblatex command or user alias, and maps every character back to
``file:line:column``. A file with no ``\\begin{document}`` (a chapter) is read whole as a body.
Here: its paragraphs become blocks (the abstract's too), citation commands in footnotes cite the
sentence they hang from, and ``% citeworth: ignore|off|on`` comments become directives.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from citeworth.drafts import Block, Directive, Draft, Span
from citeworth.sources.latex import SourcePosition, TexDocument, TexParagraph, parse_tex_file, parse_tex_files

DIRECTIVE = re.compile(r"%+\s*citeworth:\s*(\S*)")
IGNORE_COMMENT = "% citeworth: ignore"  # a directive silencing the next sentence
STDIN_NAME = "<stdin>.tex"
PARSE_SECONDS = 120  # per draft: a pathological source fails with a clear message, never hangs


def read_tex(path: Path, sources: Mapping[str, bytes] | None = None) -> Draft:
    """The draft of the main file ``path`` and the files it includes (RecordError if unparsable);
    ``sources``: its project by path relative to its folder, as an editor holds them (default:
    read from disk, as ``parse_tex_file`` reads them)."""
    if sources is None:
        doc = parse_tex_file(path, time_limit=PARSE_SECONDS, fragment=True)
    else:
        doc = parse_tex_files(dict(sources), path.name, time_limit=PARSE_SECONDS, fragment=True)
    return tex_draft(doc, str(path), path.parent)


def read_tex_text(data: bytes) -> Draft:
    """A draft read from stdin (no includes)."""
    doc = parse_tex_files({STDIN_NAME: data}, STDIN_NAME, time_limit=PARSE_SECONDS, fragment=True)
    return tex_draft(doc, "-", None)


def tex_draft(doc: TexDocument, name: str, folder: Path | None) -> Draft:
    """``doc`` as a draft; positions name files under ``folder`` (the main file's), or ``name``."""

    def display(file: str) -> str:
        return name if folder is None else (folder / PurePosixPath(file)).as_posix()

    def locate(offset: int) -> SourcePosition:
        position = doc.position(offset)
        return SourcePosition(display(position.file), position.line, position.column)

    masked = doc.source.masked
    directives = [
        Directive(region.start, match.group(1))
        for region in doc.regions
        if region.kind == "comment" and not any(m.start <= region.start < m.end for m in masked)
        if (match := DIRECTIVE.match(doc.source.text, region.start, region.end))
    ]
    footnotes = [r for r in doc.regions if r.kind == "footnote"]
    anchors = sorted(
        footnote.start for footnote in footnotes
        if any(footnote.start <= c.start < footnote.end for c in doc.citations if not c.in_text)
    )
    missing = [f"{name}: \\input/\\include of {target!r}: no such file (its text is not checked)"
               for target in doc.source.missing]
    abstract = " ".join(_without_citations(p) for p in doc.abstract) or None
    return Draft(name, [_block(doc, p) for p in doc.abstract + doc.paragraphs], locate, directives,
                 anchors, [display(f) for f in doc.source.included], missing, doc.title or None, abstract)


def _without_citations(paragraph: TexParagraph) -> str:
    text, end = [], 0
    for mark in paragraph.cites:
        text.append(paragraph.text[end:mark.start])
        end = mark.end
    return " ".join("".join([*text, paragraph.text[end:]]).split())


def _block(doc: TexDocument, paragraph: TexParagraph) -> Block:
    cites = [(mark.start, mark.end) for mark in paragraph.cites]
    formulas = [(f.start, f.end) for f in paragraph.formulas]

    def origin(start: int, end: int) -> Span:
        return paragraph.flat_offset(start), _flat_end(doc, paragraph, end)

    return Block(paragraph.text, cites, origin, sorted(cites + formulas),
                 {paragraph.text[f.start:f.end]: " ".join(f.latex.split()) for f in paragraph.formulas})


def _flat_end(doc: TexDocument, paragraph: TexParagraph, end: int) -> int:
    """The source offset just after the text ending at ``end``: a citation or formula ends where
    its command or maths ends in the source, any other character one past itself."""
    last = end - 1
    for mark in paragraph.cites:
        if mark.start <= last < mark.end:
            return doc.citations[mark.citation].end
    for formula in paragraph.formulas:
        if formula.start <= last < formula.end:
            start = paragraph.flat_offset(formula.start)
            maths = (r.end for r in doc.regions if r.kind == "math" and r.start == start)
            return next(maths, start + 1)
    return paragraph.flat_offset(last) + 1
