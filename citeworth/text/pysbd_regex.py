"""Give pysbd compiled regular expressions: a drop-in ``re`` for its modules, installed once.

pysbd calls module-level ``re.sub(pattern_string, ...)`` with several hundred distinct patterns
per paragraph (one or two per abbreviation in its list), which overflows the 512 entries of
Python's own pattern cache, so nearly every call compiles its pattern again: about a quarter of
the whole curation's time. Its char-span step also builds one pattern per sentence,
``re.escape(sentence) + r"\\s*"``, a literal that is searched once and never again.

``install()`` replaces the ``re`` name inside every loaded pysbd module with ``CachedRe``: every
module-level function compiles through a large LRU cache, and a pattern that is an escaped
literal followed by ``\\s*`` is matched with ``str.find`` instead of being compiled (its
``escape`` remembers the last strings it escaped, so the literal is known at once). It also
wraps one pysbd method (no pysbd code is copied): ``search_for_abbreviations_in_string`` loops
over all ~190 abbreviations of the language for every paragraph; the wrapper finds, in one regex
pass, the few the text writes with a "." at a word start (the only ones the loop can change the
text for) and runs pysbd's own loop over only those. Three of
its list-item patterns are compiled as equivalents that ``re`` runs faster (``FASTER_EQUIVALENTS``).

Most of pysbd's calls then find nothing: each of its ~100 rules is applied to every paragraph and
every sentence, and an abbreviation's pattern is tried wherever its letters occur inside a word.
A string that lacks a literal every match must contain (``required_literal``) is answered without
running the pattern, and pysbd's abbreviation search ``(?:^|\\s|\\r|\\n)<letters>``
(case-insensitive) with ``str.find``. All of it gives exactly the matches ``re`` gives (tests
compare pysbd's output with and without it on real papers, and each check with ``re``;
``stock()`` undoes all of it for a block).
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import types
from collections.abc import Iterator
from re import _constants as sre
from re import _parser as sre_parser

from pysbd.abbreviation_replacer import AbbreviationReplacer

CACHE_SIZE = 8192  # pysbd's English rules need ~1,500 patterns; the rest is room for abbreviations seen
_TRAILING_SPACE = r"\s*"
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
# pysbd's abbreviation search (AbbreviationReplacer.search_for_abbreviations_in_string).
_WORD_START_SEARCH = re.compile(r"\(\?:\^\|\\s\|\\r\|\\n\)([a-z0-9]+)")
# The only non-ASCII characters a case-insensitive ASCII letter matches (the re docs on IGNORECASE);
# "İ" is also the only character whose lower case is longer than itself.
_CASE_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


# pysbd's alphabetical-list searches (ListItemReplacer, run twice on every paragraph), written as
# ``re`` runs them faster. Each alternative of the original has the same body, so a match at a
# position is the same match whichever lookbehind let it start; the rewrite tries one lookbehind
# that holds exactly where one of the original's does (``(?<=^)`` and ``(?<=\\A)``: position 0).
#
# Its numbered-list search (NUMBERED_LIST_REGEX_1, run four times on every paragraph and sentence)
# likewise: a match starts at a whitespace character (its first four alternatives but the two at
# "^") or at a digit, and at one position every alternative that matches gives the same digits (one
# where a "." follows the first, two where a digit does). The rewrite starts each alternative with
# that character, so ``re`` skips to the next whitespace or digit instead of trying twelve
# alternatives at every position; the "^" and lookbehind conditions are checked after the first
# digit, grouped by the lookahead they allow ("s-" is pysbd's own, not "\\s-").
FASTER_EQUIVALENTS = {
    r"(?<=^)[a-z](?=\.)|(?<=\A)[a-z](?=\.)|(?<=\s)[a-z](?=\.)": r"(?<!\S)[a-z](?=\.)",
    r"(?<=\()[a-z]+(?=\))|(?<=^)[a-z]+(?=\))|(?<=\A)[a-z]+(?=\))|(?<=\s)[a-z]+(?=\))":
        r"(?<![^\s(])[a-z]+(?=\))",
    r"\s\d{1,2}(?=\.\s)|^\d{1,2}(?=\.\s)|\s\d{1,2}(?=\.\))|^\d{1,2}(?=\.\))|(?<=\s\-)\d{1,2}(?=\.\s)"
    r"|(?<=^\-)\d{1,2}(?=\.\s)|(?<=\s\⁃)\d{1,2}(?=\.\s)|(?<=^\⁃)\d{1,2}(?=\.\s)|(?<=s\-)\d{1,2}(?=\.\))"
    r"|(?<=^\-)\d{1,2}(?=\.\))|(?<=\s\⁃)\d{1,2}(?=\.\))|(?<=^\⁃)\d{1,2}(?=\.\))":
        r"\s\d{1,2}(?=\.[\s)])|\d(?:(?<=^\d)|(?<=^-\d)|(?<=^⁃\d)|(?<=\s⁃\d))\d?(?=\.[\s)])"
        r"|\d(?<=\s-\d)\d?(?=\.\s)|\d(?<=s-\d)\d?(?=\.\))",
}


@functools.lru_cache(maxsize=CACHE_SIZE)
def compiled(pattern: str | re.Pattern, flags: int = 0) -> tuple[re.Pattern, str | None]:
    """The compiled pattern (or its faster equivalent) and a literal every match contains (None
    when there is none to use)."""
    regex = re.compile(FASTER_EQUIVALENTS.get(pattern, pattern) if flags == 0 else pattern, flags)
    return regex, required_literal(regex)


def required_literal(regex: re.Pattern) -> str | None:
    """The longest run of literal characters that every match of ``regex`` contains (including
    what a positive lookaround matches, which is part of the string too); None if none is found.
    Under IGNORECASE only characters without case count (ASCII punctuation, digits, spaces)."""
    if not isinstance(regex.pattern, str):
        return None
    parsed = sre_parser.parse(regex.pattern, regex.flags)
    runs = list(_literal_runs(parsed, bool(parsed.state.flags & re.IGNORECASE)))
    return max(runs, key=len) if runs else None


def _literal_runs(items, ignore_case: bool) -> Iterator[str]:
    """Runs of adjacent literals in a parsed sequence and in the parts of it every match passes
    through (groups, repeats of at least one, positive lookarounds); a run never spans a group's
    edge, so it is at most shorter than it could be."""
    run: list[str] = []
    for op, arg in items:
        if _is_literal((op, arg), ignore_case):
            run.append(chr(arg))
            continue
        if run:
            yield "".join(run)
            run = []
        if op is sre.SUBPATTERN:
            _, add_flags, del_flags, body = arg
            case = (ignore_case or bool(add_flags & re.IGNORECASE)) and not del_flags & re.IGNORECASE
            yield from _literal_runs(body, case)
        elif op in _REPEATS and arg[0] >= 1:
            yield from _literal_runs(arg[2], ignore_case)
        elif op is sre.ASSERT:
            direction, body = arg
            inner = list(_literal_runs(body, ignore_case))
            # a lookbehind ends where the next item starts: its last literals run on into it
            if direction < 0 and inner and _is_literal(body[-1], ignore_case):
                run = list(inner.pop())
            yield from inner
    if run:
        yield "".join(run)


def _is_literal(item, ignore_case: bool) -> bool:
    op, arg = item
    return op is sre.LITERAL and (not ignore_case or (arg < 128 and not chr(arg).isalpha()))


def _cannot_match(literal: str | None, string) -> bool:
    return literal is not None and isinstance(string, str) and literal not in string


@functools.lru_cache(maxsize=CACHE_SIZE)
def _word_start_search(pattern: str | re.Pattern, flags: int) -> str | None:
    """The letters of pysbd's abbreviation search, when ``pattern`` is one."""
    match = _WORD_START_SEARCH.fullmatch(pattern) if isinstance(pattern, str) else None
    return match.group(1) if match and flags == re.IGNORECASE else None


def word_start_matches(letters: str, text: str) -> list[str] | None:
    """``re.findall(r"(?:^|\\s|\\r|\\n)" + letters, text, re.IGNORECASE)`` for lower-case ASCII
    ``letters``, found with ``str.find``; None when ``text`` holds a character that folds to an
    ASCII letter (only ``re`` can tell then). Matches cannot overlap: each ends in a letter."""
    lowered = _lowered(text)
    if lowered is None:
        return None
    found = []
    position = lowered.find(letters)
    while position != -1:
        if position == 0:
            found.append(text[:len(letters)])
        elif lowered[position - 1].isspace():
            found.append(text[position - 1:position + len(letters)])
        position = lowered.find(letters, position + 1)
    return found


class _LastLowered:
    """``text.lower()`` of the last text asked about, or None when it holds a character that folds
    to an ASCII letter. pysbd searches one text for each of its abbreviations in turn; the text is
    held, so ``is`` cannot mistake a new string for it."""

    text: str | None = None
    lowered: str | None = None

    def __call__(self, text: str) -> str | None:
        if text is not self.text:
            self.text = text
            self.lowered = None if any(char in text for char in _CASE_FOLDS_TO_ASCII) \
                else text.lower()  # as long as ``text``: no "İ"
        return self.lowered


_lowered = _LastLowered()


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
    if (literal := _escaped.get(body)) is not None:  # pysbd escaped it through CachedRe.escape
        return literal or None
    # Without an escaped backslash every backslash is an escape: dropping them is the fast unescape
    # (``_UNESCAPE.sub`` expands its template in Python, once per escaped space).
    literal = _UNESCAPE.sub(r"\1", body) if "\\\\" in body else body.replace("\\", "")
    return literal if literal and re.escape(literal) == body else None


class _RecentEscapes(dict):
    """``{re.escape(s): s}`` for the last strings escaped through ``CachedRe.escape``: pysbd escapes
    each sentence and searches for it at once, so the literal is known without unescaping the
    pattern and escaping it again to check (``re.escape`` is one-to-one)."""

    LIMIT = 256

    def remember(self, literal: str, escaped: str) -> None:
        if len(self) >= self.LIMIT:
            self.clear()
        self[escaped] = literal


_escaped = _RecentEscapes()


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
    def escape(pattern):
        escaped = re.escape(pattern)
        if isinstance(pattern, str):
            _escaped.remember(pattern, escaped)
        return escaped

    @staticmethod
    def compile(pattern, flags=0):
        return compiled(pattern, flags)[0]

    @staticmethod
    def sub(pattern, repl, string, count=0, flags=0):
        regex, literal = compiled(pattern, flags)
        # _cannot_match inlined: pysbd calls sub ~250 times a paragraph
        if literal is not None and isinstance(string, str) and literal not in string:
            return string
        return regex.sub(repl, string, count)

    @staticmethod
    def subn(pattern, repl, string, count=0, flags=0):
        regex, literal = compiled(pattern, flags)
        return (string, 0) if _cannot_match(literal, string) else regex.subn(repl, string, count)

    @staticmethod
    def search(pattern, string, flags=0):
        regex, literal = compiled(pattern, flags)
        return None if _cannot_match(literal, string) else regex.search(string)

    @staticmethod
    def match(pattern, string, flags=0):
        regex, literal = compiled(pattern, flags)
        return None if _cannot_match(literal, string) else regex.match(string)

    @staticmethod
    def fullmatch(pattern, string, flags=0):
        regex, literal = compiled(pattern, flags)
        return None if _cannot_match(literal, string) else regex.fullmatch(string)

    @staticmethod
    def split(pattern, string, maxsplit=0, flags=0):
        regex, literal = compiled(pattern, flags)
        return [string] if _cannot_match(literal, string) else regex.split(string, maxsplit)

    @staticmethod
    def findall(pattern, string, flags=0):
        letters = _word_start_search(pattern, flags)
        if letters is not None and isinstance(string, str) and \
                (found := word_start_matches(letters, string)) is not None:
            return found
        regex, literal = compiled(pattern, flags)
        return [] if _cannot_match(literal, string) else regex.findall(string)

    @staticmethod
    def finditer(pattern, string, flags=0):
        if (literal := _literal_then_space(pattern, flags)) is not None:
            return _find_literal_then_space(literal, string)
        regex, literal = compiled(pattern, flags)
        return iter(()) if _cannot_match(literal, string) else regex.finditer(string)


CACHED_RE = CachedRe()


class _Narrowed:
    """``original`` (a pysbd language or its ``Abbreviation`` class) with some attributes replaced."""

    def __init__(self, original, **replaced):
        self._original = original
        self.__dict__.update(replaced)

    def __getattr__(self, name: str):
        return getattr(self._original, name)


# A word of ASCII letters and digits followed by "." (in a lower-cased text).
_WORD_BEFORE_PERIOD = re.compile(r"(?<!\S)[a-z0-9]+(?=\.)")


class PeriodAbbreviationFinder:
    """Which of a language's abbreviations pysbd's abbreviation loop can change a text for, in one
    regex pass over its lower case. The loop's replacements (``replace_period_of_abbr``,
    ``replace_prepositive_abbr``, ``replace_pre_number_abbr``) each turn a "." that follows the
    abbreviation at a word start, ``(?<=\\s<abbr>)\\.`` after prepending a space, into "∯": an
    abbreviation the text never writes so is searched for nothing. Only an abbreviation of ASCII
    letters and digits is looked for (such a one before a "." is the whole word there); any other
    (with a "." that pysbd's search reads as any character, or non-ASCII letters that fold in other
    ways) is always kept."""

    def __init__(self, abbreviations: tuple[str, ...]):
        self.abbreviations = [(abbreviation, _plain(abbreviation.strip())) for abbreviation in abbreviations]

    def __call__(self, lowered: str) -> list[str]:
        """The abbreviations (in their order) that ``lowered`` writes with a "." at a word start
        (at its start or after whitespace), and every one that is not looked for."""
        found = set(_WORD_BEFORE_PERIOD.findall(lowered))
        return [abbreviation for abbreviation, plain in self.abbreviations if plain is None or plain in found]


def _plain(abbreviation: str) -> str | None:
    """``abbreviation`` in lower case if it is ASCII letters and digits (a literal as a pattern),
    else None."""
    return abbreviation.lower() if abbreviation.isascii() and abbreviation.isalnum() else None


@functools.lru_cache(maxsize=64)
def period_abbreviation_finder(abbreviations: tuple[str, ...]) -> PeriodAbbreviationFinder:
    return PeriodAbbreviationFinder(abbreviations)


def _search_period_abbreviations(self, text: str) -> str:
    """pysbd's ``search_for_abbreviations_in_string``, run over only the abbreviations ``text``
    writes with a "." at a word start (see PeriodAbbreviationFinder). For the others its
    replacements find nothing to replace, and they only turn "." into "∯", so none of them gives
    another abbreviation such a "." either. Stock where a language changes its replacements, or the
    text holds a character that folds to an ASCII letter (only ``re`` can tell then)."""
    lowered = _lowered(text)
    if lowered is None or any(getattr(type(self), name) is not getattr(_STOCK_REPLACER, name)
                              for name in ("scan_for_replacements", "replace_period_of_abbr")):
        return _STOCK_SEARCH(self, text)
    language = self.lang
    candidates = period_abbreviation_finder(tuple(language.Abbreviation.ABBREVIATIONS))(lowered)
    self.lang = _Narrowed(language, Abbreviation=_Narrowed(language.Abbreviation, ABBREVIATIONS=candidates))
    try:
        return _STOCK_SEARCH(self, text)
    finally:
        self.lang = language


_STOCK_REPLACER = AbbreviationReplacer
_STOCK_SEARCH = _STOCK_REPLACER.search_for_abbreviations_in_string


def install() -> list[str]:
    """Point ``re`` in every loaded pysbd module at ``CACHED_RE`` and give pysbd's abbreviation
    search its period-abbreviation filter; returns the modules patched. Idempotent."""
    import pysbd  # noqa: F401  (loads its modules: the segmenter imports the rest)

    patched = []
    for name, module in sorted(sys.modules.items()):
        if (name == "pysbd" or name.startswith("pysbd.")) and getattr(module, "re", None) in (re, CACHED_RE):
            module.re = CACHED_RE
            patched.append(name)
    _STOCK_REPLACER.search_for_abbreviations_in_string = _search_period_abbreviations
    return patched


@contextlib.contextmanager
def stock() -> Iterator[None]:
    """pysbd with the standard library's ``re`` for the block (the reference the public CiteWorth
    worker runs), then ``CACHED_RE`` again where it was installed."""
    patched = [module for name, module in sys.modules.items()
               if (name == "pysbd" or name.startswith("pysbd.")) and getattr(module, "re", None) is CACHED_RE]
    search = _STOCK_REPLACER.search_for_abbreviations_in_string
    for module in patched:
        module.re = re
    _STOCK_REPLACER.search_for_abbreviations_in_string = _STOCK_SEARCH
    try:
        yield
    finally:
        for module in patched:
            module.re = CACHED_RE
        _STOCK_REPLACER.search_for_abbreviations_in_string = search
