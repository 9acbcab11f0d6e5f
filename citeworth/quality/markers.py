"""Residual citation markers: text that betrays a removed citation, one regex per kind.

The citation regexes are curation's own (``citeworth.text.citations``, Appendix B of the paper),
so the gate checks exactly what curation promises to remove. The rest are residues no citation
regex describes: placeholders that S2ORC (``BIBREF``), unarXive (``{{cite:``, closed or not), LaTeX
(``\\cite``) and unresolved references (``[?]``) leave behind, and the holes a removed span leaves.
Patterns go to pandas, which runs them with RE2 on pyarrow strings and with ``re`` otherwise; the
unit tests check that both agree.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from citeworth.text import citations


@dataclass(frozen=True)
class Marker:
    name: str
    pattern: str
    what: str
    critical: bool = True


MARKERS: tuple[Marker, ...] = (
    Marker("numeric_bracket", citations.NUMERIC.pattern, "a bracketed numeric citation such as [3] or [1-4]"),
    Marker("author_year", citations.YEAR.pattern, "an author-year parenthesis such as (2010) or 2010a)"),
    Marker("et_al", citations.ET_AL.pattern, "'et al', the author list of a citation"),
    # Curation matches the lower-cased sentence; the scoped flag does the same on the text as is.
    Marker("hanging_citation", f"(?i:{citations.HANGING_CITATION.pattern})",
           "a sentence ending in a cue left by a removed citation ('shown by.', 'see.', 'e.g.')"),
    Marker("cite_placeholder", r"\{\{cite:", "an unarXive {{cite:…}} placeholder"),
    Marker("latex_cite", r"\\cite", "a LaTeX \\cite command"),
    Marker("unresolved_reference", r"\[\?\]", "an unresolved reference [?]"),
    Marker("bibref", r"BIBREF", "an S2ORC BIBREF placeholder"),
    Marker("empty_brackets", citations.EMPTY_BRACKETS.pattern,
           "empty brackets () or [] left by a removed or lost span"),
    Marker("space_before_stop", r"\s[.!?]$", "a space before the final stop, left by a removed span"),
    # Formula/figure/table placeholders are no citation, and curation can be told to keep them.
    Marker("other_placeholder", citations.PLACEHOLDER.pattern, "an unarXive {{formula:…}}-style placeholder",
           critical=False),
)


def residual_marker_mask(texts: pd.Series) -> pd.Series:
    """True where a text carries any critical marker (Table 3's 'markers removed' is its complement).

    The patterns RE2 can compile run as one alternation (one linear pass); the others (curation's
    numeric regex uses lookarounds) each take a pass with Python's ``re``, as pandas would run them
    alone -- an alternation including them would drag every pattern onto ``re``.
    """
    critical = [m.pattern for m in MARKERS if m.critical]
    linear = [p for p in critical if _re2_compiles(p)]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="This pattern is interpreted as a regular expression")
        mask = texts.str.contains("|".join(f"(?:{p})" for p in linear), na=False).astype(bool)
        for pattern in (p for p in critical if p not in linear):
            mask |= texts.str.contains(pattern, na=False).astype(bool)
    return mask


def _re2_compiles(pattern: str) -> bool:
    try:
        pc.match_substring_regex(pa.array([""]), pattern)
    except pa.ArrowInvalid:
        return False
    return True
