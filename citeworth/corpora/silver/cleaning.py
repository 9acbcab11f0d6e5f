"""Sentence cleaning before similarity scoring, as Roy & Mercer's §4.2 and Table 2 describe.

Each rule is one function of a sentence's text; ``clean`` applies the rules named in
``silver.cleaning`` in their listed order. The default order matters: symbol variants are unified
first (so "TNF‐α" with a Unicode hyphen is a name like "TNF-α"), citation indexes go before
numbers are replaced (else "[12]" became "[<num>]"), equations before Greek letters and numbers
(Greek letters and numbers inside an equation vanish with it, as in the paper), and names keep
their Greek letters spelled out before isolated numbers are replaced.

Table 2's regular expressions are garbled in the paper's text; the rules below are written from
its prose and the surviving parts (numbers with and without a prior sign, bracketed citation
indexes, chemical names ending in α or β), with the cases each must and must not change in
``tests/unit/test_silver_cleaning.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

EQUATION = "<equ>"
NUMBER = "<num>"

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi",
    "ο": "omicron", "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon",
    "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta",
    "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi", "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}
_GREEK_CLASS = "[" + "".join(_GREEK) + "]"

# Variants -> one form: dashes and minus signs, quotes and primes, lookalike letters and signs,
# ligatures, spaces. Then the symbols that carry no meaning in a sentence are deleted.
_VARIANTS = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033", '"'),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032`", "'"),
    "\u00b5": "μ", "\u2126": "Ω", "\u212a": "K", "\u212b": "Å", "\u2217": "*", "\u2715": "×", "\u2a2f": "×",
    "\u22c5": "·", "\u2266": "≤", "\u2267": "≥", "\u2a7d": "≤", "\u2a7e": "≥", "\u223c": "~",
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\u2026": "...",
    **dict.fromkeys("\u00a0\u2002\u2003\u2009\u200a\u202f\u205f\u3000", " "),
    **dict.fromkeys("\u200b\u200c\u200d\ufeff\u00ad", ""),
    **dict.fromkeys("†‡§¶©®™•▪◦●■□◆◇★☆✓✔", ""),
})

_CITATION_INDEX = re.compile(r"\s*(?:\[\d+(?:\s*[,\-]\s*\d+)*\]|\{\{cite:[^{}]*\}\})")
# Maths the readers keep as markup: unarXive / LaTeX placeholders, inline TeX.
_MARKUP_MATHS = re.compile(r"\{\{formula:[^{}]*\}\}|\$[^$]+\$|\\\(.+?\\\)")
# A plain-text equation: operands joined by operators. An operand is a number, a variable of up to
# three letters (Latin or Greek, with a subscript), a number times a variable ("2x"), each with an
# optional exponent ("mc^2", "10^5"), or a short function call ("log(x)"). An operator is a
# relation or arithmetic sign; "-" and "/" count only with spaces around them, so hyphenated
# words, ranges ("10-20") and units ("mg/kg") are not maths. (Each part is matched one way only:
# no nested repetition, so no catastrophic backtracking on long words.)
_VARIABLE = rf"(?:[A-Za-z]|{_GREEK_CLASS}){{1,3}}(?:_\{{?\w+\}}?)?"
_OPERAND = (rf"(?:\(?(?:\d+(?:\.\d+)?(?:{_VARIABLE})?|{_VARIABLE})(?:\^\{{?[-+]?\w+\}}?)?\)?"
            r"|[A-Za-z]{1,4}\([^()]{1,20}\))")
_OPERATOR = r"(?:\s*[=<>≤≥≈≠≡∝~≪≫×÷+*^·]\s*|\s+[-/]\s+)"
_EQUATION = re.compile(rf"(?<![\w<>-])[-+]?{_OPERAND}(?:{_OPERATOR}{_OPERAND})+(?![\w>-])")
# An operator spaced the same on both sides: "CD4+ T cells" is no sum.
_SYMMETRIC = re.compile(r"\S(\s*)(?:[=<>≤≥≈≠≡∝~≪≫×÷+*^·]|[-/](?=\s))(\s*)\S")

# A Greek letter that is part of a name: after a hyphen ("TNF-α"), before one ("α-carbon",
# "17β-estradiol" after the digits), or glued after letters or digits ("PPARγ", "IL-1β").
_GREEK_IN_NAME = re.compile(
    rf"(?<=[\w)\]]-){_GREEK_CLASS}|{_GREEK_CLASS}(?=-\w)|(?<=[A-Za-z0-9]){_GREEK_CLASS}")

# An isolated number (optionally signed, with thousands separators, decimals, an exponent): not
# glued to a word, a decimal point or a prime on either side, not a name's number after a
# letter and hyphen ("IL-6"), not a locant before a hyphen and a name ("3-hydroxy", "1,2-dichloro").
# The number is atomic: "2.5-fold" is not "2" followed by ".5-fold".
_ISOLATED_NUMBER = re.compile(
    r"(?<![\w.'])(?<![A-Za-z]-)(?>[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w'])"
    r"(?!(?:,\d+)*-[^\W\d_])")


def unify_symbols(text: str) -> str:
    """One form per symbol: Unicode dashes and minus -> "-", typographic quotes and primes -> '"' or
    "'", the micro sign -> μ, lookalike signs and ligatures -> their usual form, odd spaces -> " ";
    symbols without meaning in a sentence (†, ‡, §, ©, ™, bullets, ...) deleted."""
    return _spaces(text.translate(_VARIANTS))


def remove_citation_indexes(text: str) -> str:
    """Delete bracketed citation indexes ("[12]", "[3, 5-7]") and the readers' citation
    placeholders ("{{cite:...}}"); punctuation after one closes up ("shown [2]." -> "shown.")."""
    return _spaces(_CITATION_INDEX.sub("", text))


def replace_equations(text: str) -> str:
    """Every equation -> "<equ>": the readers' formula placeholders, inline TeX, and plain-text
    equations ("E = mc^2", "p < 0.05", "2 × 10^5"); Greek letters and numbers inside go with it."""
    text = _MARKUP_MATHS.sub(EQUATION, text)
    return _spaces(_EQUATION.sub(_equation_or_not, text))


def _equation_or_not(match: re.Match) -> str:
    """A match is an equation only if one operator is spaced the same on both sides."""
    found = match.group(0)
    symmetric = any(before == after for before, after in _SYMMETRIC.findall(found))
    return EQUATION if symmetric else found


def spell_out_greek_in_chemicals(text: str) -> str:
    """A Greek letter that is part of a chemical or biological name is written out ("α-carbon" ->
    "alpha-carbon", "TNF-α" -> "TNF-alpha", "17β-estradiol" -> "17beta-estradiol"); a letter
    standing alone (a variable) is left as it is."""
    return _GREEK_IN_NAME.sub(lambda match: _GREEK[match.group(0)], text)


def replace_numbers(text: str) -> str:
    """Every isolated number -> "<num>" ("in 2019", "1.5 mM", "-5 °C", "45%", "1,000 cells");
    numbers inside names are kept ("H2O", "CO2", "IL-6", "p53", "3-hydroxybutyrate",
    "1,2-dichloroethane", "5'-UTR")."""
    return _ISOLATED_NUMBER.sub(NUMBER, text)


def lowercase(text: str) -> str:
    """All text lower-cased, as the paper's last step (placeholders are lower case already)."""
    return text.lower()


# The rules by name, in the default order (see the module docstring).
RULES: dict[str, Callable[[str], str]] = {
    "symbols": unify_symbols,
    "citation_indexes": remove_citation_indexes,
    "equations": replace_equations,
    "greek_letters": spell_out_greek_in_chemicals,
    "numbers": replace_numbers,
    "lowercase": lowercase,
}


def check_rules(names: Sequence[str]) -> None:
    if unknown := [name for name in names if name not in RULES]:
        raise ValueError(f"silver.cleaning: unknown rule(s) {unknown}; rules: {list(RULES)}")


def clean(text: str, rules: Sequence[str] = tuple(RULES)) -> str:
    """``text`` through each named rule in order, whitespace collapsed."""
    text = _spaces(text)
    for name in rules:
        text = RULES[name](text)
    return text


def _spaces(text: str) -> str:
    """Runs of whitespace -> one space, none at either end."""
    return " ".join(text.split())
