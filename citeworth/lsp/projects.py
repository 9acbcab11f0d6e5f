"""Which draft an open file belongs to, and that draft's files as the editor holds them.

A Markdown file is a draft of its own. A LaTeX file belongs to the main file that includes it, so
that a project of ``\\input`` files is checked as one draft (as ``citeworth check main.tex``
checks it): the main file is the one a ``% !TEX root = main.tex`` comment names (the convention
of TeXShop, texlab and LaTeX Workshop), else the file itself when it has ``\\documentclass`` and
``\\begin{document}``, else the first main file in its folder or the folders above it (up to
``MAX_LEVELS_UP``, never above the workspace root) whose flattened project includes it, else
the file itself, read whole (a chapter on its own, as ``check`` reads one).

A draft's files are read from disk (``project_files``: the main file's folder, bounded as an
e-print is) with every open buffer in that folder laid over them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from citeworth.check.run import syntax_of
from citeworth.sources.latex import project_files
from citeworth.sources.latex.project import decode, flatten, is_main_text, tex_texts

MAX_LEVELS_UP = 2  # folders above a chapter's own searched for its main file
_MAGIC_ROOT = re.compile(r"^\s*%\s*!\s*TEX\s+root\s*=\s*(.+?)\s*$", re.I | re.M)
_MAGIC_LINES = 20  # the magic comment is looked for in a file's first lines


def draft_syntax(path: Path) -> str | None:
    """``tex`` or ``md`` (the drafts a server checks), None for any other file."""
    syntax = syntax_of(str(path))
    return syntax if syntax in ("tex", "md") else None


def main_file(path: Path, text: str, boundary: Path | None) -> Path:
    """The main file of the LaTeX file ``path`` whose text is ``text`` (see the module
    docstring); ``boundary``: the workspace root, above which no folder is searched."""
    head = "\n".join(text.splitlines()[:_MAGIC_LINES])
    if magic := _MAGIC_ROOT.search(head):
        return Path(os.path.normpath(path.parent / magic.group(1)))
    if is_main_text(text):
        return path
    folder = path.parent
    for _ in range(MAX_LEVELS_UP + 1):
        for candidate in sorted(folder.glob("*.tex")):
            if candidate != path and _includes(candidate, path):
                return candidate
        if folder.parent == folder or (boundary is not None and folder == boundary):
            break
        folder = folder.parent
    return path


def _includes(candidate: Path, path: Path) -> bool:
    """Whether ``candidate`` is a main file whose project includes ``path``."""
    try:
        if not is_main_text(decode(candidate.read_bytes())):
            return False
        texts = tex_texts(project_files(candidate))
    except OSError:
        return False
    wanted = path.relative_to(candidate.parent).as_posix() if path.is_relative_to(candidate.parent) else None
    return wanted is not None and wanted in flatten(texts, candidate.name).included


def draft_sources(main: Path, syntax: str, disk: Mapping[str, bytes],
                  buffers: Mapping[Path, str]) -> dict[str, bytes]:
    """The files of the draft ``main`` by path relative to its folder: ``disk`` (what
    ``disk_files`` read) with the open ``buffers`` (path -> text) in that folder laid over it."""
    if syntax == "md":
        text = buffers.get(main)
        return {main.name: text.encode()} if text is not None else dict(disk)
    sources = dict(disk)
    for path, text in buffers.items():
        if path.is_relative_to(main.parent):
            sources[path.relative_to(main.parent).as_posix()] = text.encode()
    return sources


def disk_files(main: Path, syntax: str) -> dict[str, bytes]:
    """What of the draft ``main`` is on disk: a LaTeX project's files, or the one Markdown file;
    nothing when the main file is gone (a buffer may still hold it)."""
    try:
        if syntax == "md":
            return {main.name: main.read_bytes()}
        return project_files(main)
    except OSError:
        return {}
