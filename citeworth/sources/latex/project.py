"""A paper's LaTeX project -> one flattened source with a map back to file, line and column.

- **Main file**: arXiv's ``00README.json`` / ``00README.XXX`` ``toplevel`` hint first; else the files
  with ``\\documentclass`` (or LaTeX 2.09's ``\\documentstyle``) and ``\\begin{document}`` outside
  comments; among several, one with a ``.bbl`` of its name, one no other candidate includes, one
  without a stale-looking name (``_old-*``, ``*backup*``), then the shallowest, then by name.
- **Flattening**: ``\\input``, ``\\include``, ``\\subfile``, ``\\import`` / ``\\subimport`` (and the
  ``*from`` variants) are replaced by the included file's text, recursively (a cycle or a missing
  file leaves the command in place; the missing names are reported). A ``\\subfile`` keeps only
  its document body. Files the main file never includes (stale drafts) are never read.
- **Masking**: comments stay in the flattened text (the parser sees them as comments), while
  ``\\iffalse...\\fi``, ``comment`` environments and verbatim-like environments are blanked in a
  copy of the same length for the parser, so every offset of the parse is an offset of the
  flattened text, and ``SourceMap.position`` turns it into ``file:line:column``.
"""

from __future__ import annotations

import bisect
import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from citeworth.sources.base import RecordError

MAX_INCLUDE_DEPTH = 20
TEX_SUFFIXES = (".tex", ".ltx", ".latex")
_DOCUMENTCLASS = re.compile(r"\\document(?:class|style)\b")
BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_END_DOCUMENT = re.compile(r"\\end\s*\{document\}")
_STALE = re.compile(r"(^|/)(_|\.)|old|backup|bak|copy|draft|tmp|arxiv-?orig", re.I)
_INCLUDE = re.compile(
    r"\\(?P<cmd>input|include|subfile)\s*\{(?P<name>[^{}]*)\}"
    r"|\\input\s+(?P<bare>[^\s{}\\%]+)"
    r"|\\(?P<icmd>sub)?(?:import|inputfrom|includefrom)\*?\s*\{(?P<dir>[^{}]*)\}\s*\{(?P<iname>[^{}]*)\}"
)
# Regions the parser must not see as LaTeX (their content is not markup).
_VERBATIM_ENVS = (
    "verbatim",
    "verbatim*",
    "Verbatim",
    "BVerbatim",
    "lstlisting",
    "minted",
    "comment",
    "filecontents",
    "filecontents*",
)
_VERBATIM_BEGIN = re.compile(r"\\begin\s*\{(" + "|".join(re.escape(e) for e in _VERBATIM_ENVS) + r")\}")
_IF_TOKEN = re.compile(r"\\(iffalse|if0|if[a-zA-Z@]*|fi|else)(?![a-zA-Z@])")


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """A place in a source file: 1-based line and column (characters, not bytes)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Region:
    """A stretch of the flattened source that is not running text: ``kind`` is one of
    ``preamble``, ``comment``, ``math``, ``float``, ``caption``, ``footnote``, ``verbatim``,
    ``bibliography``, ``abstract``, ``heading``, ``skipped`` (``\\iffalse`` and the like); and
    ``definition``, a macro's body where it is defined, which the parser blanks, not reports."""

    kind: str
    start: int
    end: int


class SourceMap:
    """Flattened-source offsets -> (file, line, column)."""

    def __init__(self, segments: list[tuple[int, str, int]], texts: dict[str, str]):
        self._starts = [start for start, _, _ in segments]
        self._segments = segments  # (flat start, file, offset in that file), sorted by flat start
        self._line_starts = {name: _line_starts(text) for name, text in texts.items()}

    def position(self, offset: int) -> SourcePosition:
        index = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        start, file, file_start = self._segments[index]
        local = file_start + offset - start
        lines = self._line_starts[file]
        line = bisect.bisect_right(lines, local) - 1
        return SourcePosition(file, line + 1, local - lines[line] + 1)


@dataclass
class FlatSource:
    main: str
    text: str  # the flattened source, comments included
    parse_text: str  # ``text`` with masked regions blanked (same length, same line breaks)
    source_map: SourceMap
    masked: list[Region] = field(default_factory=list)
    included: list[str] = field(default_factory=list)  # files read, main first
    missing: list[str] = field(default_factory=list)  # included names no file answers to


def decode(data: bytes) -> str:
    """UTF-8 (a BOM dropped), else Latin-1, which any byte string is; line ends as ``\\n``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def tex_texts(files: dict[str, bytes]) -> dict[str, str]:
    """The decoded text of every file that may be LaTeX (by suffix, or no suffix, and no NUL)."""
    texts = {}
    for name, data in files.items():
        suffix = posixpath.splitext(name)[1].lower()
        if (suffix in TEX_SUFFIXES or suffix in (".bbl", ".bib", ".sty", ".cls", "")) and b"\0" not in data:
            texts[name] = decode(data)
    return texts


def find_main(files: dict[str, bytes], texts: dict[str, str]) -> str:
    """The main ``.tex`` file's name; RecordError ``no_main_tex`` when there is none."""
    if hinted := _readme_main(files, texts):
        return hinted
    candidates = [
        name
        for name, text in texts.items()
        if is_main_text(text) and posixpath.splitext(name)[1].lower() in (*TEX_SUFFIXES, "")
    ]
    if not candidates:
        pdfs = [name for name in files if name.lower().endswith(".pdf")]
        detail = "no file with \\documentclass and \\begin{document}"
        raise RecordError(
            "no_main_tex",
            f"{detail} among {len(files)} file(s)" + (" (PDFs only)" if pdfs and not texts else ""),
        )
    included = {target for name in candidates for target in _include_names(texts[name])}

    def rank(name: str) -> tuple:
        stem = posixpath.splitext(name)[0]
        return (
            f"{stem}.bbl" not in files,
            _bare(name) in included,
            bool(_STALE.search(name)),
            name.count("/"),
            name,
        )

    return min(candidates, key=rank)


def flatten(texts: dict[str, str], main: str) -> FlatSource:
    """The main file with every include resolved (see the module docstring)."""
    pieces: list[tuple[str, str, int]] = []  # (text, file, offset in file)
    included: list[str] = []
    missing: list[str] = []
    _flatten_file(texts, main, posixpath.dirname(main), pieces, included, missing, [main])
    segments, parts, position = [], [], 0
    for text, file, file_start in pieces:
        if text:
            segments.append((position, file, file_start))
            parts.append(text)
            position += len(text)
    if not segments:
        segments.append((0, main, 0))
    flat = "".join(parts)
    masked = masked_regions(flat)
    source_map = SourceMap(segments, {name: texts[name] for name in included})
    return FlatSource(main, flat, blank(flat, masked), source_map, masked, included, missing)


def _flatten_file(
    texts: dict[str, str], name: str, base: str, pieces: list, included: list, missing: list, stack: list[str]
) -> None:
    text = texts[name]
    included.append(name)
    start, end = 0, len(text)
    if len(stack) > 1 and (begin := BEGIN_DOCUMENT.search(strip_comments(text))):  # a \subfile: its body
        start = begin.end()
        end = m.start() if (m := _END_DOCUMENT.search(strip_comments(text), start)) else len(text)
    scan = blank(strip_comments(text), masked_regions(text))
    position = start
    for match in _INCLUDE.finditer(scan, start, end):
        target, target_base = _target(match, base, posixpath.dirname(name))
        found = _resolve(texts, target, target_base, posixpath.dirname(name))
        if found is None or found in stack or len(stack) > MAX_INCLUDE_DEPTH:
            if found is None and not _is_graphics(target):
                missing.append(target)
            continue
        pieces.append((text[position : match.start()], name, position))
        _flatten_file(texts, found, target_base, pieces, included, missing, [*stack, found])
        position = match.end()
    pieces.append((text[position:end], name, position))


def _target(match: re.Match, base: str, here: str) -> tuple[str, str]:
    """The named file and the folder later includes in it resolve against."""
    if match.group("iname") is not None:
        folder = match.group("dir").strip()
        folder = posixpath.join(here if match.group("icmd") else base, folder)
        return posixpath.join(folder, match.group("iname").strip()), posixpath.normpath(folder)
    return (match.group("name") or match.group("bare") or "").strip(), base


def _resolve(texts: dict[str, str], target: str, base: str, here: str) -> str | None:
    if not target:
        return None
    for folder in dict.fromkeys((base, here, "")):
        path = posixpath.normpath(posixpath.join(folder, target))
        for candidate in (path, path + ".tex"):
            if candidate in texts and not candidate.startswith(".."):
                return candidate
    return None


def _is_graphics(name: str) -> bool:
    return name.lower().endswith((".pdf", ".png", ".jpg", ".eps", ".pgf", ".tikz"))


def _include_names(text: str) -> set[str]:
    return {
        _bare((m.group("name") or m.group("bare") or m.group("iname") or "").strip())
        for m in _INCLUDE.finditer(strip_comments(text))
    }


def _bare(name: str) -> str:
    name = posixpath.normpath(name)
    return name[: -len(".tex")] if name.endswith(".tex") else name


def is_main_text(text: str) -> bool:
    stripped = strip_comments(text)
    return bool(_DOCUMENTCLASS.search(stripped) and BEGIN_DOCUMENT.search(stripped))


def _readme_main(files: dict[str, bytes], texts: dict[str, str]) -> str | None:
    """The ``toplevel`` file arXiv's 00README names (JSON, or the legacy ``name directive`` lines)."""
    for name, data in files.items():
        if posixpath.basename(name) == "00README.json":
            try:
                sources = json.loads(data.decode("utf-8")).get("sources") or []
            except (ValueError, AttributeError):
                continue
            for source in sources:
                if (
                    isinstance(source, dict)
                    and source.get("usage") == "toplevel"
                    and source.get("filename") in texts
                ):
                    return source["filename"]
        elif posixpath.basename(name).startswith("00README"):
            for line in decode(data).splitlines():
                words = line.split()
                if len(words) >= 2 and words[1].lower() == "toplevel" and words[0] in texts:
                    return words[0]
    return None


def strip_comments(text: str) -> str:
    """``text`` with every ``%`` comment blanked to spaces (same length); ``\\%`` is not a comment."""
    parts, position = [], 0
    for start, end in _comments(text):
        parts += (text[position:start], " " * (end - start))
        position = end
    return "".join([*parts, text[position:]]) if parts else text


def comment_regions(text: str) -> list[Region]:
    return [Region("comment", start, end) for start, end in _comments(text)]


def _comments(text: str) -> Iterator[tuple[int, int]]:
    """Each comment's extent: from a ``%`` after an even run of backslashes to the end of its line
    (``str.find`` from ``%`` to ``%``: a paper's sources are stripped several times, and a regular
    expression tried at every character cost a second per megabyte)."""
    start = text.find("%")
    while start != -1:
        backslashes = 0
        while start > backslashes and text[start - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2:
            start = text.find("%", start + 1)
            continue
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        yield start, end
        start = text.find("%", end)


def masked_regions(text: str) -> list[Region]:
    """``\\iffalse``/``\\if0`` blocks and verbatim-like environments, outside comments."""
    scan = strip_comments(text)
    regions = []
    position = 0
    while True:
        verbatim = _VERBATIM_BEGIN.search(scan, position)
        iffalse = re.compile(r"\\(iffalse|if0)(?![a-zA-Z@])").search(scan, position)
        first = min((m for m in (verbatim, iffalse) if m), key=lambda m: m.start(), default=None)
        if first is None:
            return regions
        if first is verbatim:
            env = verbatim.group(1)
            close = text.find(f"\\end{{{env}}}", verbatim.end())
            end = len(text) if close == -1 else close + len(f"\\end{{{env}}}")
            regions.append(Region("comment" if env == "comment" else "verbatim", verbatim.start(), end))
        else:
            end = _matching_fi(scan, iffalse.end())
            regions.append(Region("skipped", iffalse.start(), end))
        position = regions[-1].end


def _matching_fi(text: str, position: int) -> int:
    depth = 1
    for match in _IF_TOKEN.finditer(text, position):
        word = match.group(1)
        if word == "fi":
            depth -= 1
            if depth == 0:
                return match.end()
        elif word != "else":
            depth += 1
    return len(text)


def blank(text: str, regions: list[Region]) -> str:
    """``text`` with ``regions`` turned into spaces, line breaks kept (so lengths and lines agree;
    the parser's paragraph splitting ignores the blank lines this leaves, see ``in_regions``)."""
    if not regions:
        return text
    parts, position = [], 0
    for region in sorted(regions, key=lambda r: r.start):
        if region.start < position:
            continue
        parts.append(text[position : region.start])
        parts.append(_NOT_NEWLINE.sub(" ", text[region.start : region.end]))
        position = region.end
    parts.append(text[position:])
    return "".join(parts)


_NOT_NEWLINE = re.compile(r"[^\n]")


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]
