"""LaTeX sources (arXiv e-prints, bulk tars, folders) -> ``Paper``; and the parser ``check`` uses on drafts.

Modules: ``files`` (archives and members, in memory, bounded), ``project`` (main file, flattening
of ``\\input``/``\\include``, the source map, masked regions), ``macros`` (user definitions and
citation aliases), ``vocabulary`` (the commands and environments the parser knows, by kind),
``parser`` (pylatexenc -> paragraphs, citations, regions), ``bibliography``
(``.bbl``, ``thebibliography``, ``.bib``; stable reference ids), ``assemble`` (-> ``Paper``),
``reader`` (the ``arxiv_latex`` reader: a shard -> Papers and quarantined BadRecords).

The parser API for a draft (``citeworth check``)::

    doc = parse_tex_file("paper/main.tex")          # follows \\input/\\include under paper/
    for paragraph in doc.paragraphs:                  # running text only (TexParagraph)
        paragraph.text                                # "{{cite:KEY}}" / "{{formula:ID}}" placeholders
        paragraph.cites                               # CiteMark(start, end, key, citation) in the text
        doc.paragraph_position(paragraph, offset)     # SourcePosition(file, line, column), 1-based
    doc.citations             # Citation(command, cite_command, keys, start, end, in_text)
    doc.regions                                       # Region(kind, start, end): math, float, caption, ...
    doc.position(flat_offset)                         # any offset of doc.source.text -> file:line:column
    parse_tex_file("paper/intro.tex", fragment=True)  # a chapter without \\begin{document}: all body
"""

from __future__ import annotations

from pathlib import Path

from citeworth.sources.base import RecordError
from citeworth.sources.latex.files import MAX_FILES, MAX_SOURCE_BYTES
from citeworth.sources.latex.parser import (
    Citation,
    CiteMark,
    Deadline,
    Formula,
    TexDocument,
    TexParagraph,
    parse,
)
from citeworth.sources.latex.project import Region, SourcePosition, decode, find_main, flatten, tex_texts

__all__ = [
    "Citation",
    "CiteMark",
    "Formula",
    "Region",
    "SourcePosition",
    "TexDocument",
    "TexParagraph",
    "parse_tex_file",
    "parse_tex_files",
]

_PROJECT_SUFFIXES = (".tex", ".ltx", ".bbl", ".bib", ".sty", ".cls")


def parse_tex_files(
    files: dict[str, bytes], main: str | None = None, time_limit: float | None = None, fragment: bool = False
) -> TexDocument:
    """Parse a LaTeX project given as ``{relative path: bytes}``; ``main`` defaults to the detected
    main file (a ``main`` given is read as LaTeX whatever its name). Raises
    ``citeworth.sources.base.RecordError`` (``.reason``: ``no_main_tex``, also for a binary
    ``main``; ``no_document_body``, ``latex_timeout``, ``latex_parse_error``) when it cannot.
    ``fragment``: a ``main`` without ``\\begin{document}`` (a chapter of a draft) is read whole as
    the body. ``time_limit`` (seconds) bounds the parse, pylatexenc's included."""
    deadline = Deadline(time_limit) if time_limit is not None else None
    texts = tex_texts(files)
    main = main or find_main(files, texts)
    if main not in texts:  # named by the caller: LaTeX whatever its name (check --syntax tex)
        if b"\0" in files[main]:
            raise RecordError("no_main_tex", f"{main} is binary data (a NUL byte), not LaTeX")
        texts[main] = decode(files[main])
    return parse(flatten(texts, main), deadline, fragment)


def parse_tex_file(path: str | Path, time_limit: float | None = None, fragment: bool = False) -> TexDocument:
    """Parse the main file ``path`` and the LaTeX files below its folder that it includes
    (positions name files relative to that folder)."""
    path = Path(path)
    return parse_tex_files(project_files(path), path.name, time_limit, fragment)


def project_files(path: Path) -> dict[str, bytes]:
    """The main file ``path`` and the LaTeX and bibliography files below its folder (bounded as an
    e-print is), by path relative to that folder."""
    files, total = {}, 0
    for file in sorted(path.parent.rglob("*")):
        if file.is_file() and file.suffix.lower() in _PROJECT_SUFFIXES:
            total += file.stat().st_size
            if total > MAX_SOURCE_BYTES or len(files) >= MAX_FILES:
                break
            files[file.relative_to(path.parent).as_posix()] = file.read_bytes()
    files[path.name] = path.read_bytes()
    return files
