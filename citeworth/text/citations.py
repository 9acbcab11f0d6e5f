"""Citation regexes (Appendix B of the paper) and the citation-span operations of §3.2.

Two regexes differ from the public code on purpose, with tests that show why:

- ``NUMERIC`` accepts exactly the strings of the paper's ``\\[([0-9]+\\s*[,-;]*\\s*)*[0-9]+\\s*\\]``
  (``[,-;]`` is the range ``, - . / 0-9 : ;``) but without its nested quantifiers, which backtrack
  exponentially: ``"[" + 20 digits`` with no closing bracket takes seconds, 30 digits hours.
- ``ET_AL`` is word-bounded: the code's ``et( )?al(\\.?)`` also fires inside "metal" or "petal".
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from citeworth.core.paper import CitationSpan

# The curation's defaults for cleaning a sentence once its citations are removed (curate.rules:
# hanging_punctuation, min_sentence_chars), which ``citeworth check`` applies to a draft's sentences.
HANGING_PUNCTUATION = " @&:;/-,\n\t"
MIN_SENTENCE_CHARS = 20

# The paper's numeric regex without nested quantifiers. Its language: "[", a digit, then characters
# of the range [,-;] (which holds the digits) and whitespace runs that touch a digit on at least one
# side, the last non-space a digit, "]". Possessive/atomic parts make every attempt linear.
NUMERIC = re.compile(r"\[[0-9](?:[,-;]|(?<=[0-9])\s++(?!\])|\s++(?=[0-9]))*+(?<=[0-9])\s*+\]")
YEAR = re.compile(r"\(?[12][0-9]{3}[a-z]?\s*\)")
ET_AL = re.compile(r"\bet ?al\b\.?")
CITE_PLACEHOLDER = re.compile(r"\{\{cite:[^{}]*\}\}")
PLACEHOLDER = re.compile(r"\{\{(\w+):[^{}]*\}\}")
HANGING_CITATION = re.compile(
    r"\s+\(?(\(\s*\)|like|reference|including|include|with|for instance|for example|see also|at|following"
    r"|of|from|to|in|by|see|as|e\.?g\.?(,)?|viz(\.)?(,)?)\s*(,)*(-)*[\)\]]?\s*[.?!]\s*$"
)
# Empty brackets: a span the source lost or a removal left ("lineage cocktail (), Sca1"). Not after a
# name: "phylo.d()" and "sample()" are R functions the text names, not holes.
EMPTY_BRACKETS = re.compile(r"(?:^|[^\w.])(?:\(\s*\)|\[\s*\])")
# Whether YEAR or ET_AL match anywhere, 4x as fast: an optional leading "(" or trailing "." does not
# decide it, and "\b" written as a look-behind after the "e" lets re skip ahead to a candidate "e".
_YEAR_ANYWHERE = re.compile(r"[12][0-9]{3}[a-z]?\s*\)")
_ET_AL_ANYWHERE = re.compile(r"e(?<!\w.)t ?al\b")
# A run of bracketed numeric citations, e.g. "[1]", "[2, 5-7]", "[3], [4]".
_NUMERIC_RUN = re.compile(rf"(?:{NUMERIC.pattern})(?:[\s,;\u2013-]*(?:{NUMERIC.pattern}))*")
_PLACEHOLDER_RUN = re.compile(rf"(?:{CITE_PLACEHOLDER.pattern})(?:[\s,;]*(?:{CITE_PLACEHOLDER.pattern}))*")
_CAPITAL = re.compile(r"[A-Z]")
_SQUARE_AUTHOR_YEAR = re.compile(r"\[([^\[\]]*[A-Z][^\[\]]*[12][0-9]{3}[a-z]?\s*)\]")
_WORD = re.compile(r"\w")
# Punctuation that attaches to the preceding word once a citation before it is removed.
_ATTACHING = frozenset(string.punctuation) - frozenset("([{")
_FINAL = frozenset(".!?")
_CLOSER = {"(": ")", "[": "]"}
# En and em dashes, which JATS and LaTeX sources print in ranges ("[1\u20133]"), as the "-" of the
# paper's numeric regex (its range [,-;] holds "-" but no other dash).
_DASHES = str.maketrans("\u2013\u2014", "--")


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation marker as removed from the text: one or more merged source spans."""

    start: int
    end: int
    text: str
    ref_ids: tuple[str | None, ...]


def ascii_dashes(text: str) -> str:
    # ``in`` first: translate copies every string, and most hold no dash (an ASCII one: at once)
    return text.translate(_DASHES) if "\u2013" in text or "\u2014" in text else text


def span_problem(text: str, spans: Sequence[CitationSpan]) -> str | None:
    """Why the source's spans cannot be trusted ("bad_span"), or None: out of range, text that
    differs from the paragraph, or overlapping."""
    previous_end = 0
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if not 0 <= span.start < span.end <= len(text) or text[span.start:span.end] != span.text:
            return "bad_span"
        if span.start < previous_end:
            return "bad_span"
        previous_end = span.end
    return None


def trimmed(text: str, span: CitationSpan) -> Citation:
    """A span as a Citation without surrounding whitespace (parsers often include a space)."""
    start = span.start + len(span.text) - len(span.text.lstrip())
    end = span.end - (len(span.text) - len(span.text.rstrip()))
    return Citation(start, end, text[start:end], span.ref_ids or (None,))


def merge_citations(text: str, spans: Sequence[CitationSpan], gap: re.Pattern[str],
                    balance: bool = True) -> list[Citation]:
    """Merge spans separated only by ``gap`` (e.g. "[1], [2]" -> one citation) and, with
    ``balance``, extend each over a bracket the parser left just outside it."""
    merged: list[Citation] = []
    for span in sorted(spans, key=lambda s: s.start):
        cite = trimmed(text, span)
        if merged and gap.fullmatch(text, merged[-1].end, cite.start):
            last = merged.pop()
            cite = Citation(last.start, cite.end, text[last.start:cite.end], last.ref_ids + cite.ref_ids)
        merged.append(cite)
    return [balanced(text, c) for c in merged] if balance else merged


def balanced(text: str, cite: Citation) -> Citation:
    """Extend ``cite`` over whitespace + the bracket that closes (or opens) an unbalanced one,
    e.g. "(Green et al. 1993" + " )" -> "(Green et al. 1993 )"."""
    start, end = cite.start, cite.end
    for opener, closer in _CLOSER.items():
        excess = cite.text.count(opener) - cite.text.count(closer)
        if excess > 0:
            after = _skip_space(text, end, +1)
            end = after + 1 if after < len(text) and text[after] == closer else end
        elif excess < 0:
            before = _skip_space(text, start - 1, -1)
            start = before if before >= 0 and text[before] == opener else start
    if (start, end) == (cite.start, cite.end):
        return cite
    return Citation(start, end, text[start:end], cite.ref_ids)


def _skip_space(text: str, i: int, step: int) -> int:
    """The first index from ``i`` in direction ``step`` that is not whitespace (may leave the text)."""
    while 0 <= i < len(text) and text[i].isspace():
        i += step
    return i


def citation_format(text: str) -> str | None:
    """"numeric" (bracketed numbers), "author_year" (parenthetical, with a name and a year),
    "placeholder" (unarXive ``{{cite:...}}``) or None for any other form (superscripts,
    narrative "Smith (2001)", parenthetical numbers "(14)")."""
    text = text.strip()
    if _NUMERIC_RUN.fullmatch(text):
        return "numeric"
    if text.startswith("(") and text.endswith(")") and YEAR.search(text) and _CAPITAL.search(text):
        return "author_year"
    if _PLACEHOLDER_RUN.fullmatch(text):
        return "placeholder"
    return None


def round_author_year(text: str) -> str:
    """An author-year citation printed in square brackets ("[Smith et al., 2009]", early eLife) in
    round ones, as the paper's author-year regex reads them; any other text as it is."""
    return f"({match.group(1)})" if (match := _SQUARE_AUTHOR_YEAR.fullmatch(text.strip())) else text


def looks_like_citation(text: str) -> bool:
    """The public code's ``valid_citation_format``: ``text`` contains a bracketed number or a year
    before a closing parenthesis (unarXive placeholders, which have no surface form, count too)."""
    return bool(NUMERIC.search(text) or YEAR.search(text) or CITE_PLACEHOLDER.search(text))


def missed_citation(text: str) -> bool:
    """Does ``text`` (citation spans already removed) still contain a citation (Appendix B)?"""
    return bool(NUMERIC.search(text) or _YEAR_ANYWHERE.search(text) or _ET_AL_ANYWHERE.search(text)
                or CITE_PLACEHOLDER.search(text))


def hanging_citation(sentence: str) -> bool:
    """Does the sentence end in a citation marker such as "as shown by." (Appendix B)?"""
    return HANGING_CITATION.search(sentence.lower()) is not None


def placeholder_kinds(text: str) -> set[str]:
    """Kinds of ``{{kind:...}}`` placeholders in ``text`` (unarXive: cite, formula, figure, table)."""
    return {m.group(1) for m in PLACEHOLDER.finditer(text)}


def at_sentence_end(text: str, cites: Sequence[Citation], sentence_end: int) -> bool:
    """Only punctuation and whitespace follow each citation, up to the next one or the sentence end."""
    return all(_WORD.search(text, cite.end, stop) is None for cite, stop in _stretches(cites, sentence_end))


def could_end_sentence(text: str, cites: Sequence[Citation], end_chars: str) -> bool:
    """Before splitting: after each citation, up to the next one, no word comes before a
    sentence-final mark (or the end of the paragraph). Necessary for being at the end of a sentence."""
    stretches = _stretches(cites, len(text))
    return all(_ends_before_a_word(text, cite.end, stop, end_chars) for cite, stop in stretches)


def _stretches(cites: Sequence[Citation], end: int) -> Iterator[tuple[Citation, int]]:
    """Each citation with where the text after it stops: the next citation's start, or ``end``."""
    for cite, following in zip(cites, [*cites[1:], None], strict=True):
        yield cite, following.start if following is not None else end


def _ends_before_a_word(text: str, start: int, stop: int, end_chars: str) -> bool:
    for char in text[start:stop]:
        if char in end_chars:
            return True
        if char.isalnum() or char == "_":
            return False
    return True


def remove_citations(text: str, start: int, end: int, cites: Sequence[Citation]) -> str:
    """``text[start:end]`` without the citations; punctuation after a removed citation attaches to
    the preceding word ("shown [2]." -> "shown."), and a citation glued to the word before it keeps
    the space after it ("SymPy[12] provides" -> "SymPy provides")."""
    out = text[start:cites[0].start] if cites else text[start:end]
    for i, cite in enumerate(cites):
        spaced = text[cite.end:cites[i + 1].start if i + 1 < len(cites) else end]
        following = spaced.lstrip()
        if following[:1] in _ATTACHING:
            out = out.rstrip()
            if following[:1] in _FINAL and out[-1:] in _FINAL:  # "work. [3]." -> "work."
                following = following[1:]
        elif following != spaced and out[-1:] and not out[-1:].isspace():
            following = " " + following
        out += following
    return out.strip()


def normalize_space(text: str) -> str:
    """Runs of whitespace (line breaks from LaTeX sources, no-break spaces, double spaces) -> one space."""
    return " ".join(text.split())


def strip_hanging_punctuation(sentence: str, chars: str, min_chars: int) -> str:
    """Drop characters in ``chars`` just before the final mark, e.g. "shown ,." -> "shown." (the
    public code's loop, stopping at ``min_chars``), and just inside a closing bracket before it,
    e.g. "Telescope (DKIST, )." -> "Telescope (DKIST)." where a citation was removed."""
    while len(sentence) > max(min_chars, 2):
        if sentence[-2] in chars:
            sentence = sentence[:-2] + sentence[-1]
        elif sentence[-2] in ")]" and sentence[-3] in chars:
            sentence = sentence[:-3] + sentence[-2:]
        else:
            break
    return sentence
