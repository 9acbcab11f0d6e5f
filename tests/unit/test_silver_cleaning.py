"""Roy & Mercer's cleaning rules (§4.2, Table 2): each rule's must-change and must-keep cases."""

from __future__ import annotations

import pytest

from citeworth.corpora.silver.cleaning import (
    RULES,
    check_rules,
    clean,
    lowercase,
    remove_citation_indexes,
    replace_equations,
    replace_numbers,
    spell_out_greek_in_chemicals,
    unify_symbols,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("E = mc^2 holds.", "<equ> holds."),
    ("We used p < 0.05 as the threshold.", "We used <equ> as the threshold."),
    ("About 2 × 10^5 cells", "About <equ> cells"),
    ("x=2y+3", "<equ>"),
    ("The value f(x) = 2x is small.", "The value <equ> is small."),
    ("α = 0.05 was used.", "<equ> was used."),  # a Greek letter in an equation goes with it
    ("It is a - b here.", "It is <equ> here."),
    ("Given {{formula:3f2a}} and $x_1^2$ we see \\(y\\).", "Given <equ> and <equ> we see <equ>."),
    # not maths: hyphens, ranges, units, asymmetric signs ("CD4+ T cells"), long words
    ("CD4+ T cells in long-term care got 10-20 mg/kg.", "CD4+ T cells in long-term care got 10-20 mg/kg."),
    ("a-b and internationalisation + more", "a-b and internationalisation + more"),
])
def test_equations_become_a_placeholder(text, expected):
    assert replace_equations(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("In 2019, 45% of 1,000 cells at -5 °C got 1.5 mM or 3.2e-4 M.",
     "In <num>, <num>% of <num> cells at <num> °C got <num> mM or <num> M."),
    ("Doses of 10-20 mg in 3:1 mixtures.", "Doses of <num>-<num> mg in <num>:<num> mixtures."),
    # numbers in names are kept: glued to letters, after a letter and hyphen, locants, primes
    ("H2O, CO2, IL-6, p53, 1990s, 3-hydroxybutyrate, 1,2-dichloroethane and 5'-UTR.",
     "H2O, CO2, IL-6, p53, 1990s, 3-hydroxybutyrate, 1,2-dichloroethane and 5'-UTR."),
    ("A 2.5-fold rise.", "A 2.5-fold rise."),  # the paper's regex keeps a number before "-word"
])
def test_isolated_numbers_become_a_placeholder(text, expected):
    assert replace_numbers(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("α-carbon, β-lactam, TNF-α, IFN-γ", "alpha-carbon, beta-lactam, TNF-alpha, IFN-gamma"),
    ("17β-estradiol, PPARγ and IL-1β", "17beta-estradiol, PPARgamma and IL-1beta"),
    ("a factor α of 2 and the μ of 5 μg", "a factor α of 2 and the μ of 5 μg"),  # variables and units stay
])
def test_greek_letters_in_names_are_spelled_out(text, expected):
    assert spell_out_greek_in_chemicals(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("As shown [12], it works [3, 5-7].", "As shown, it works."),
    ("It works{{cite:title:ab12}}, really.", "It works, really."),
    ("A note [a] stays.", "A note [a] stays."),
])
def test_citation_indexes_are_removed(text, expected):
    assert remove_citation_indexes(text) == expected


def test_symbol_variants_are_unified_and_meaningless_symbols_deleted():
    text = "TNF‐α – a “test” ’s \u00b5g\u00a0dose† of ﬁve"
    assert unify_symbols(text) == 'TNF-α - a "test" \'s μg dose of five'
    assert unify_symbols("x ≦ 3 and y ⩾ 4 … ok") == "x ≤ 3 and y ≥ 4 ... ok"


def test_the_rules_run_in_the_given_order_and_lower_case_last():
    text = "TNF‐α rose 2.5 fold [4] when p < 0.05 in 12 mice (IL-6)."
    assert clean(text) == "tnf-alpha rose <num> fold when <equ> in <num> mice (il-6)."
    assert clean(text, ["lowercase"]) == lowercase(text)
    assert clean("  spaced   out  ", []) == "spaced out"
    assert list(RULES) == ["symbols", "citation_indexes", "equations", "greek_letters", "numbers",
                           "lowercase"]


def test_unknown_rules_are_refused():
    with pytest.raises(ValueError, match="unknown rule"):
        check_rules(["numbers", "stemming"])
