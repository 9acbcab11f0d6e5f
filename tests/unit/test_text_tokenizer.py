"""The spaCy-free tokenizer gives spaCy's token offsets with scispacy's rules, and its rules file is
the one spaCy and scispacy give today (real papers: tests/integration/test_splitter_equivalence.py);
the stop words shipped for an author's install are scikit-learn's."""

from __future__ import annotations

import random

import pytest
from spacy.attrs import IDX, LENGTH

from citeworth.text import scispacy_rules
from citeworth.text.tokenizer import RuleTokenizer

# Characters and pieces that exercise every rule: affixes, infixes, special cases (abbreviations,
# emoticons, contractions), units, whitespace runs and the citation markers the readers write.
PIECES = [*"aAbBeEgGiIlLpPsSxX.,;:()[]{}<>'\"-–—/+=*^%°²×0123456789", " ", " ", "  ", "\t", "\n",
          "\u3000", *"?!…`’$€#@&|\\~_", "e.g.", "i.e.", "Fig.", "et al.", "can't", "U.S.", "a.m.", "Dr.",
          "vs.", "{{cite:1}}", ":)", "(-:", "o.O", "'s", "n't", "cm", "kg", "°C.", "http://x.org/a"]


@pytest.fixture(scope="module")
def stock():
    return scispacy_rules.stock_tokenizer()


def test_the_shipped_rules_are_those_spacy_and_scispacy_give():
    assert scispacy_rules.main(["--check"]) == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_strings_get_spacy_s_offsets(stock, seed):
    rng = random.Random(seed)
    rules = RuleTokenizer.default()
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60)))
        assert list(map(list, rules.offsets(text))) == stock(text).to_array([IDX, LENGTH]).tolist(), text


@pytest.mark.parametrize("text", [
    "As shown in Fig. 3 (e.g. the U.S. data), it can't be.",
    "work.[3] Next", "( ;", "e.g .", "IL-2 and TNF-α were 5×10^3 cells/ml (p<0.05).", " lead", "trail  ",
])
def test_sentences_and_counts_of_tricky_texts(stock, text):
    rules = RuleTokenizer.default()
    assert list(map(list, rules.offsets(text))) == stock(text).to_array([IDX, LENGTH]).tolist()
    assert rules.count(text) == sum(not token.is_space for token in stock(text))


def test_scispacy_s_abbreviations_come_with_the_rules():
    from scispacy.consts import ABBREVIATIONS

    assert RuleTokenizer.default().abbreviations == frozenset(ABBREVIATIONS)


def test_the_shipped_stop_words_are_scikit_learn_s():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from citeworth.text.stop_words import STOP_WORDS

    assert STOP_WORDS == ENGLISH_STOP_WORDS
