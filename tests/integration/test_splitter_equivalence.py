"""The fast sentence splitting gives exactly the sentences of the stock pipeline: pysbd with its
compiled-pattern ``re`` gives pysbd's own output, the spaCy-free tokenizer gives spaCy's token
offsets, SentenceSplitter's boundaries equal scispacy's ``pysbd_sentencizer`` + ``doc.sents`` (each
with the join of a cut at "et. al.", ``join_et_al``), and the curation's records and funnel are
byte-identical -- on real papers of the mirror (unarXive, PLOS, PMC)."""

from __future__ import annotations

import re
import string
import sys
import tarfile

import pysbd
import pytest

from citeworth.core.io import dumps
from citeworth.core.paper import Paper
from citeworth.curate.config import CurationConfig
from citeworth.curate.engine import Curator
from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.text import pysbd_regex
from citeworth.text.scispacy_rules import stock_pipeline
from citeworth.text.sentences import _WHITESPACE_TO_SPACES, SentenceSplitter, _stripped, join_et_al
from citeworth.text.tokenizer import RuleTokenizer

CORPORA = [("unarxive", "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"),
           ("jats", "github/PLOS/allofplos/allofplos/starter_corpus/*.xml"),
           ("jats", "github/titipata/pubmed_parser/data/*.nxml")]


@pytest.fixture(scope="module")
def papers(mirror, tmp_path_factory) -> list[Paper]:
    folder = tmp_path_factory.mktemp("unarxive")
    found = []
    for reader, pattern in CORPORA:
        if pattern.endswith(".tar.gz"):
            with tarfile.open(mirror / pattern) as tar:
                member = next(m for m in tar.getmembers() if m.name.endswith(".jsonl"))
                (folder / "sample.jsonl").write_bytes(tar.extractfile(member).read())
            pattern = str(folder / "sample.jsonl")
        else:
            pattern = str(mirror / pattern)
        for shard in discover_shards(reader, pattern):
            found += [paper for paper in read_shard(shard) if not isinstance(paper, BadRecord)]
    return found


@pytest.fixture(scope="module")
def paragraphs(papers) -> list[str]:
    """Every sixth paragraph with citations (the kind curation splits), whitespace as split."""
    texts = [p.text for paper in papers for p in paper.paragraphs if p.cite_spans]
    assert len(texts) > 3000
    return [text.translate(_WHITESPACE_TO_SPACES) for text in texts[::6]]


@pytest.fixture(scope="module")
def splitter() -> SentenceSplitter:
    return SentenceSplitter()


@pytest.fixture(scope="module")
def stock():
    """The spaCy pipeline the curation's sentences are defined by."""
    return stock_pipeline()


@pytest.mark.slow
def test_the_rule_tokenizer_gives_spacy_s_token_offsets_on_real_paragraphs(papers, stock):
    from spacy.attrs import IDX, LENGTH

    texts = [p.text for paper in papers for p in paper.paragraphs]  # as read: line breaks, tabs too
    rules = RuleTokenizer.default()
    spacy_offsets = (stock.tokenizer(text).to_array([IDX, LENGTH]).tolist() for text in texts)
    mismatched = [text for text, expected in zip(texts, spacy_offsets, strict=True)
                  if list(map(list, rules.offsets(text))) != expected]
    assert not mismatched[:3] and len(texts) > 5000


def test_every_pysbd_module_gets_the_cached_re(splitter):
    patched = pysbd_regex.install()
    assert "pysbd.abbreviation_replacer" in patched and "pysbd.segmenter" in patched
    assert not [name for name, module in sys.modules.items()
                if name.startswith("pysbd") and getattr(module, "re", None) is re]


@pytest.mark.slow
def test_pysbd_with_cached_patterns_segments_exactly_as_without(paragraphs, splitter):
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def segments():
        return [[(s.sent, s.start, s.end) for s in segmenter.segment(text)] for text in paragraphs]

    fast = segments()
    with pysbd_regex.stock():
        assert segments() == fast


@pytest.mark.slow
def test_sentence_bounds_equal_the_stock_scispacy_pipeline(paragraphs, splitter, stock):
    with pysbd_regex.stock():
        expected = [join_et_al(doc.text, [b for sent in doc.sents
                                          if (b := _stripped(doc.text, sent.start_char, sent.end_char))])
                    for doc in stock.pipe(paragraphs)]
    assert list(splitter.split(paragraphs)) == expected
    assert sum(map(len, expected)) > 3 * len(expected)


class StockSplitter:
    """The splitting before the speed-up: scispacy's component, ``doc.sents``, pysbd's own ``re``
    (and the same join of a cut at "et. al.")."""

    def __init__(self, nlp):
        self.nlp = nlp

    def split(self, texts):
        with pysbd_regex.stock():
            docs = list(self.nlp.pipe(text.translate(_WHITESPACE_TO_SPACES) for text in texts))
        for doc in docs:
            yield join_et_al(doc.text, [b for sent in doc.sents
                                        if (b := _stripped(doc.text, sent.start_char, sent.end_char))])


@pytest.mark.slow
def test_curation_output_is_byte_identical_to_the_stock_splitting(papers, splitter, stock):
    """The same records and the same funnel, on every real paper of the corpora above."""
    outputs = []
    for split_with in (splitter, StockSplitter(stock)):
        curator = Curator(CurationConfig(), split_with)
        records = [dumps(record) for record in curator.curate(papers)]
        outputs.append((records, dumps(curator.stats.to_dict())))
    assert outputs[0] == outputs[1] and len(outputs[0][0]) > 100


@pytest.mark.parametrize("text", [
    "Fig. 3 shows it. Fig. 3 shows it.\u3000Then (a+b)*c [1]. Fig. 3 shows it.",
    "a.b a.b  a.b\x1c\x1d tail",  # \s also matches the ASCII separators \x1c-\x1f
    "$x^2$ and \\alpha? {1} | ^ $x^2$ and",
])
@pytest.mark.parametrize("escape", [re.escape, pysbd_regex.CACHED_RE.escape],
                         ids=["unescaped", "remembered"])  # as pysbd escapes: the literal is remembered
def test_the_literal_fast_path_finds_what_re_finds(text, escape):
    pysbd_regex._escaped.clear()  # "unescaped" must not find what an earlier case remembered
    for sentence in {text[i:j] for i in range(0, len(text), 5) for j in range(i + 1, len(text), 7)}:
        pattern = f"{escape(sentence)}\\s*"
        assert pattern == f"{re.escape(sentence)}\\s*"
        assert pysbd_regex._literal_then_space(pattern, 0) == sentence
        fast = [(m.group(), m.span()) for m in pysbd_regex.CACHED_RE.finditer(pattern, text)]
        assert fast == [(m.group(), m.span()) for m in re.finditer(pattern, text)]


def test_other_patterns_are_compiled_not_taken_literally():
    for pattern in [r"a.b\s*", r"\s*", r"(?i)abc\s*", r"abc\s+", "abc"]:
        assert pysbd_regex._literal_then_space(pattern, 0) is None
    assert pysbd_regex._literal_then_space(re.escape("abc") + r"\s*", re.IGNORECASE) is None


@pytest.mark.parametrize(("pattern", "flags", "literal"), [
    (r"(?<=\sco)\.(?=(\.|\s[a-z]))", 0, "co."),  # a lookbehind's last literals run on into what follows
    (r"(?<={al} ).{1}", 0, "{al} "),
    (r"(?<=a(?=b)c)d", 0, "cd"),
    (r"(\s\.){3}\s", 0, "."),
    ("♬", 0, "♬"),
    (r"(?<=\S)(!|\?){3,}", 0, None),  # only alternatives
    (r"ab?c", 0, "a"),  # an optional part ends a run
    (r"x(?:yz)*w", 0, "x"),
    (r"(?!abc)d", 0, "d"),  # a negative lookahead's literals need not be there
    (r"(?i)abc,d", 0, ","),  # under IGNORECASE only characters without case count
    (r"ab(?i:cd)ef", 0, "ab"),
    (r"a\.b", re.IGNORECASE, "."),
    (r"a.b", 0, "a"),  # "." is any character
])
def test_required_literal(pattern, flags, literal):
    assert pysbd_regex.required_literal(re.compile(pattern, flags)) == literal


def test_a_string_without_the_required_literal_has_no_match(paragraphs, monkeypatch):
    """Every pattern pysbd uses on real paragraphs, on those paragraphs (and pieces of them)."""
    patterns = set()
    compiled = pysbd_regex.compiled

    def recording(pattern, flags=0):
        patterns.add((pattern, flags))
        return compiled(pattern, flags)

    pysbd_regex.install()
    monkeypatch.setattr(pysbd_regex, "compiled", recording)
    # every abbreviation's patterns, not only those the filter keeps for these paragraphs
    monkeypatch.setattr(pysbd_regex.AbbreviationReplacer, "search_for_abbreviations_in_string",
                        pysbd_regex._STOCK_SEARCH)
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    for text in paragraphs[:40]:
        segmenter.segment(text)
    texts = [piece for text in paragraphs[::10] for piece in (text, text[: len(text) // 3], text[::7])]
    checked = 0
    for pattern, flags in patterns:
        regex, literal = compiled(pattern, flags)
        for text in texts:
            if literal is not None and literal not in text:
                assert regex.search(text) is None, (pattern, text)
                checked += 1
    assert len(patterns) > 200 and checked > 10_000


def test_ascii_letters_fold_only_to_the_four_characters_named():
    """What word_start_matches rests on: under IGNORECASE an ASCII letter matches itself in either
    case and, beyond ASCII, only the four characters named; no other non-ASCII character has a
    lower case holding an ASCII letter or longer than itself."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    beyond_ascii = set(re.findall(r"[a-z]", every, re.IGNORECASE)) - set(string.ascii_letters)
    assert beyond_ascii == set(pysbd_regex._CASE_FOLDS_TO_ASCII)
    odd = {c for c in every if not c.isascii() and (len(c.lower()) != 1 or c.lower().isascii())}
    assert odd <= set(pysbd_regex._CASE_FOLDS_TO_ASCII)


def test_word_start_matches_find_what_re_finds(paragraphs):
    from pysbd.lang.english import English

    texts = [*paragraphs[::20], "al. Al al\tAL\x1cal xal", "al", " al", "\u212aal al", "ſal"]
    for letters in sorted({a.strip() for a in English.Abbreviation.ABBREVIATIONS if a.strip().isalnum()}):
        pattern = rf"(?:^|\s|\r|\n){letters}"
        assert pysbd_regex._word_start_search(pattern, re.IGNORECASE) == letters
        for text in texts:
            fast = pysbd_regex.word_start_matches(letters, text)
            if fast is not None:
                assert fast == re.findall(pattern, text, re.IGNORECASE), (letters, text)
    assert pysbd_regex.word_start_matches("al", "\u212aal al") is None
    assert pysbd_regex._word_start_search(r"(?:^|\s|\r|\n)al", 0) is None


# Abbreviation searches of every kind: at a word start, inside a word only, in either case, after
# separators \s matches, a "." that pysbd's unescaped pattern reads as any character ("e.g" finds
# "eXg"), and the characters that fold to an ASCII letter.
ABBREVIATION_TEXTS = ["al. Al al\tAL\x1cal xal", "al", " al", "the.g extra eXg e.g. i.e.",
                      "in.Fig. 2 no. 3", "\u212aal al", "ſal. St. Co.", "Ph.D. d.phil U.S. us dr.phil",
                      "\u00a0fig. 3 \u2003vs. 4"]


@pytest.mark.parametrize("language", ["en", "es", "el", "fr", "it"])
def test_the_period_abbreviation_finder_leaves_out_only_what_pysbd_cannot_change(paragraphs, language):
    """What the abbreviation filter rests on: for an abbreviation it leaves out, pysbd's own loop
    over that abbreviation alone returns the text unchanged; for English (ASCII abbreviations, the
    ones looked for) it leaves out nearly all. (Languages that change the loop's replacements, such
    as de and ru, are not filtered.)"""
    from pysbd.languages import Language

    module = Language.get_language_code(language)
    abbreviations = tuple(module.Abbreviation.ABBREVIATIONS)
    finder = pysbd_regex.period_abbreviation_finder(abbreviations)
    kept, texts = 0, [*paragraphs[::10], *ABBREVIATION_TEXTS]
    for text in texts:
        if (lowered := pysbd_regex._lowered(text)) is None:
            continue  # the filter is not used for such a text
        candidates = set(finder(lowered))
        kept += len(candidates)
        with pysbd_regex.stock():  # once per text: entering it scans every loaded module
            for abbreviation in set(abbreviations) - candidates:
                replacer = module.AbbreviationReplacer(text, pysbd_regex._Narrowed(module, Abbreviation=(
                    pysbd_regex._Narrowed(module.Abbreviation, ABBREVIATIONS=[abbreviation]))))
                assert pysbd_regex._STOCK_SEARCH(replacer, text) == text, (abbreviation, text)
    assert language != "en" or kept < len(abbreviations) * len(texts) / 20


def test_the_abbreviation_filter_segments_as_stock_pysbd(paragraphs):
    """pysbd's segments with the filter installed equal those without it (every other speed-up
    is off in both runs, so this compares the filter alone)."""
    pysbd_regex.install()
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    texts = [*paragraphs[::4], *ABBREVIATION_TEXTS]

    def segments():
        return [[(s.sent, s.start, s.end) for s in segmenter.segment(text)] for text in texts]

    with pysbd_regex.stock():
        stock = segments()
        replacer = pysbd_regex.AbbreviationReplacer
        replacer.search_for_abbreviations_in_string = pysbd_regex._search_period_abbreviations
        try:
            filtered = segments()
        finally:
            replacer.search_for_abbreviations_in_string = pysbd_regex._STOCK_SEARCH
    assert filtered == stock


# Numbered lists in every form pysbd's search knows ("1. ", "2.)", after "-", "⁃" or "s-", at the
# start), and near misses: three digits, "1.5", "1.x", other whitespace, other dashes.
NUMBERED_LIST_TEXTS = ["1. a 2. b 12. c 3.) d 123. e 1.5 f 4.x 56.) \u00a07.\u2003", "-1. x", "⁃2.) y",
                       " -3. z -4.) s-5.) s-6. a-7. \t⁃8. \n⁃9.) –10. ⁃11.\u00a0", "7.)", "-89.)", "⁃9. ",
                       "x 10.\n11.) 12.3. 1.. 2.", "٣. ٤٥.) ²."]


@pytest.mark.parametrize(("original", "faster"), pysbd_regex.FASTER_EQUIVALENTS.items())
def test_a_faster_equivalent_matches_where_and_what_the_original_matches(paragraphs, original, faster):
    """At every start position of every text: the same match (or none), so every ``re`` function
    gives the same result with either pattern."""
    texts = [*paragraphs[::5], "a. (b) c) x(d) (ef)g) (Ab) \x1ca. \u00a0b. ab. a.b -c. 1a. é. \u212a.",
             "a.", "ab)", "(a)", " z.", "\u2003(i) (ii)\n(iii)", *NUMBERED_LIST_TEXTS]
    slow, fast = re.compile(original), re.compile(faster)
    assert pysbd_regex.CACHED_RE.compile(original).pattern == faster
    matched = 0
    for text in texts:
        for position in range(len(text)):
            expected = slow.match(text, position)
            found = fast.match(text, position)
            assert (found and found.span()) == (expected and expected.span()), (text, position)
            matched += expected is not None
    assert matched > 20
