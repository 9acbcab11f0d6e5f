"""Give pysbd compiled regular expressions: a drop-in ``re`` for its modules, installed once.

pysbd calls module-level ``re.sub(pattern_string, ...)`` with several hundred distinct patterns
per paragraph (one or two per abbreviation in its list), which overflows the 512 entries of
Python's own pattern cache, so nearly every call compiles its pattern again: about a quarter of
the whole curation's time. Its char-span step also builds one pattern per sentence,
``re.escape(sentence) + r"\\s*"``, a literal that is searched once and never again.

``install()`` replaces the ``re`` name inside every loaded pysbd module (nothing else, and no
pysbd code) with ``CachedRe``: every module-level function compiles through a large LRU cache,
and a pattern that is an escaped literal followed by ``\\s*`` is matched with ``str.find``
instead of being compiled. Both give exactly the matches ``re`` gives (tests compare pysbd's
output with and without it on real papers).
"""

from __future__ import annotations

import functools
import re
import sys
import types
from collections.abc import Iterator

CACHE_SIZE = 8192  # pysbd's English rules need ~1,500 patterns; the rest is room for abbreviations seen
_TRAILING_SPACE = r"\s*"
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)


@functools.lru_cache(maxsize=CACHE_SIZE)
def compiled(pattern: str | re.Pattern, flags: int = 0) -> re.Pattern:
    return re.compile(pattern, flags)


class _LiteralMatch:
    """What pysbd reads of a match (``group()``, ``span()``) for a literal found by ``str.find``."""

    __slots__ = ("_text", "_start", "_end")

    def __init__(self, text: str, start: int, end: int):
        self._text, self._start, self._end = text, start, end

    def group(self) -> str:
        return self._text[self._start:self._end]

    def span(self) -> tuple[int, int]:
        return self._start, self._end


def _literal_then_space(pattern: str | re.Pattern, flags: int) -> str | None:
    """The literal ``s`` when ``pattern`` is exactly ``re.escape(s) + r"\\s*"`` (``s`` not empty)."""
    if flags or not isinstance(pattern, str) or not pattern.endswith(_TRAILING_SPACE):
        return None
    body = pattern[: -len(_TRAILING_SPACE)]
    literal = _UNESCAPE.sub(r"\1", body)
    return literal if literal and re.escape(literal) == body else None


def _find_literal_then_space(literal: str, text: str) -> Iterator[_LiteralMatch]:
    """``re.finditer(re.escape(literal) + r"\\s*", text)``: leftmost occurrences, none overlapping,
    each extended over the whitespace after it (``\\s`` is ``str.isspace`` for str patterns)."""
    position = text.find(literal)
    while position != -1:
        end = position + len(literal)
        while end < len(text) and text[end].isspace():
            end += 1
        yield _LiteralMatch(text, position, end)
        position = text.find(literal, end)


class CachedRe(types.ModuleType):
    """``re`` with cached compilation; anything not defined here is the real module's."""

    def __init__(self) -> None:
        super().__init__("re", __doc__)

    def __getattr__(self, name: str):
        return getattr(re, name)

    @staticmethod
    def compile(pattern, flags=0):
        return compiled(pattern, flags)

    @staticmethod
    def sub(pattern, repl, string, count=0, flags=0):
        return compiled(pattern, flags).sub(repl, string, count)

    @staticmethod
    def subn(pattern, repl, string, count=0, flags=0):
        return compiled(pattern, flags).subn(repl, string, count)

    @staticmethod
    def search(pattern, string, flags=0):
        return compiled(pattern, flags).search(string)

    @staticmethod
    def match(pattern, string, flags=0):
        return compiled(pattern, flags).match(string)

    @staticmethod
    def fullmatch(pattern, string, flags=0):
        return compiled(pattern, flags).fullmatch(string)

    @staticmethod
    def split(pattern, string, maxsplit=0, flags=0):
        return compiled(pattern, flags).split(string, maxsplit)

    @staticmethod
    def findall(pattern, string, flags=0):
        return compiled(pattern, flags).findall(string)

    @staticmethod
    def finditer(pattern, string, flags=0):
        if (literal := _literal_then_space(pattern, flags)) is not None:
            return _find_literal_then_space(literal, string)
        return compiled(pattern, flags).finditer(string)


CACHED_RE = CachedRe()


def install() -> list[str]:
    """Point ``re`` in every loaded pysbd module at ``CACHED_RE``; returns their names. Idempotent."""
    import pysbd  # noqa: F401  (loads its modules: the segmenter imports the rest)

    patched = []
    for name, module in sorted(sys.modules.items()):
        if (name == "pysbd" or name.startswith("pysbd.")) and getattr(module, "re", None) in (re, CACHED_RE):
            module.re = CACHED_RE
            patched.append(name)
    return patched
