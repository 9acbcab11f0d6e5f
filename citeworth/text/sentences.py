"""Sentence splitting with scispacy (§3.2), as character offsets into the paragraph.

The default runs offline and without spaCy: scispacy's ``pysbd_sentencizer`` as it behaves on
scispacy's tokenizer, computed from pysbd's sentences and the tokens' offsets of
``citeworth.text.tokenizer`` (scispacy's tokenizer rules in pure Python: an author's install
cuts sentences as the dataset does without spaCy). pysbd runs with compiled patterns (see
pysbd_regex.py). Tests compare the sentences with the stock spaCy pipeline's
(``citeworth.text.scispacy_rules.stock_pipeline``) on real papers. When ``spacy_model`` names an
installed spaCy pipeline (e.g. a scispacy ``en_core_sci_*`` model) or a pipeline directory, its
sentence boundaries are used instead, in batches. Either way a cut at "et. al." is joined again
(``join_et_al``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

import pysbd

from citeworth.core.errors import StageFailed
from citeworth.text.tokenizer import RuleTokenizer

# Every whitespace character but " " (line breaks, tabs, no-break spaces, ...) -> " ".
_WHITESPACE_TO_SPACES = {c: " " for c in range(0x3001) if chr(c).isspace() and chr(c) != " "}
_WORD = re.compile(r"\w")
Bounds = tuple[int, int]  # [start, end) of a sentence, without surrounding whitespace
# The longest paragraph the curation splits (curate.rules.max_paragraph_chars): splitting time grows
# faster than the length, and no real paragraph comes near it.
MAX_PARAGRAPH_CHARS = 20_000
_ET_END = re.compile(r"(?<![\w.])et\.\Z")
_AL_START = re.compile(r"al\b")


def load_pipeline(spacy_model: str):
    """The installed spaCy pipeline ``spacy_model`` (a package name or a pipeline directory)."""
    import spacy

    try:
        # Only what sentence boundaries need: the parser (or a senter/sentencizer) and its inputs.
        return spacy.load(spacy_model, exclude=["ner", "lemmatizer", "attribute_ruler"])
    except OSError as exc:
        raise StageFailed(
            f"spaCy pipeline {spacy_model!r} is not installed or not a pipeline directory ({exc}); "
            "install it, or set curate.rules.spacy_model to null for the offline scispacy tokenizer + pysbd"
        ) from exc


def scispacy_token_counter() -> Callable[[str], int]:
    """Tokens of a text as scispacy's tokenizer cuts them (Table 2's token count), spaces not counted."""
    return RuleTokenizer.default().count


class SentenceSplitter:
    """Batched sentence boundaries: ``split(texts)`` yields one list of ``Bounds`` per text."""

    def __init__(self, spacy_model: str | None = None, batch_size: int = 256):
        self.nlp = None if spacy_model is None else load_pipeline(spacy_model)
        self.batch_size = batch_size
        if spacy_model is None:
            from citeworth.text import pysbd_regex

            pysbd_regex.install()
            self._tokenizer = RuleTokenizer.default()
            self._segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def split(self, texts: Iterable[str]) -> Iterator[list[Bounds]]:
        # Line breaks inside a paragraph are layout (LaTeX source lines in unarXive), not sentence
        # ends, but pysbd splits on them; and scispacy drops a pysbd sentence that ends in a
        # no-break space (its span does not align with the tokens). Plain spaces fix both, and a
        # one-for-one substitution keeps every offset valid.
        flat = (text.translate(_WHITESPACE_TO_SPACES) for text in texts)
        if self.nlp is not None:
            for doc in self.nlp.pipe(flat, batch_size=self.batch_size):
                text = doc.text
                yield join_et_al(text, [b for sent in doc.sents
                                        if (b := _stripped(text, sent.start_char, sent.end_char))])
        else:
            for text in flat:
                yield join_et_al(text, self._pysbd_sentences(text))

    def _pysbd_sentences(self, text: str) -> list[Bounds]:
        """What scispacy's ``pysbd_sentencizer`` then ``doc.sents`` give, from token offsets: a
        token starts a sentence when a pysbd sentence (trailing spaces off) is exactly a run of
        tokens starting with it and the token before it is not one of scispacy's abbreviations.
        (The component's line-break rules never fire: ``split`` leaves no line breaks.)"""
        tokens = self._tokenizer.offsets(text)  # (start, length) per token
        if not tokens:
            return []
        token_at = {start: i for i, (start, _) in enumerate(tokens)}
        token_ends = {start + length for start, length in tokens}
        firsts = set()
        for sentence in self._segmenter.segment(text):
            end = sentence.end - (len(sentence.sent) - len(sentence.sent.rstrip(" ")))
            i = token_at.get(sentence.start)
            if i and end > sentence.start and end in token_ends:  # i == 0 starts the first sentence anyway
                before, length = tokens[i - 1]
                if text[before:before + length] not in self._tokenizer.abbreviations:
                    firsts.add(i)
        cuts = [0, *sorted(firsts), len(tokens)]
        bounds = []
        for first, stop in itertools.pairwise(cuts):
            last_start, last_length = tokens[stop - 1]
            if b := _stripped(text, tokens[first][0], last_start + last_length):
                bounds.append(b)
        return bounds


def _stripped(text: str, start: int, end: int) -> Bounds | None:
    """Bounds without leading/trailing whitespace (pysbd glues newlines onto sentences); None if blank."""
    piece = text[start:end]
    core = piece.strip()
    if not core:
        return None
    start += len(piece) - len(piece.lstrip())
    return start, start + len(core)


def join_et_al(text: str, bounds: Sequence[Bounds]) -> list[Bounds]:
    """Join the sentences cut at "et. al." (authors' typo for "et al.", common in real papers), which
    pysbd and spaCy's models take for a sentence end: "... and Ye et." | "al. [17] did too." (or
    "al, ...", "al (2019) ...")."""
    joined: list[Bounds] = []
    for start, end in bounds:
        if joined and _AL_START.match(text, start) and _ET_END.search(text, *joined[-1]):
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def attach_citation_only(text: str, bounds: Sequence[Bounds], spans: Sequence[Bounds]) -> list[Bounds]:
    """Join a "sentence" made only of citations and punctuation to the sentence before it: the
    splitter cuts "previous work.{{cite:...}}, {{cite:...}}" after the period, but the citations
    belong to that sentence. ``spans`` must be sorted by start and not cross ``bounds``."""
    joined: list[Bounds] = []
    i = 0
    for start, end in bounds:
        outside, cursor, cited = [], start, False
        while i < len(spans) and spans[i][0] < end:
            outside.append(text[cursor:spans[i][0]])
            cursor, cited = spans[i][1], True
            i += 1
        outside.append(text[cursor:end])
        if joined and cited and not _WORD.search("".join(outside)):
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def join_across(bounds: Sequence[Bounds], spans: Sequence[Bounds]) -> list[Bounds]:
    """Join consecutive sentences whenever a span (e.g. a citation) crosses the boundary between
    them, so no span is ever split across sentences. ``spans`` must be sorted by start."""
    joined: list[Bounds] = []
    i = 0
    for start, end in bounds:
        while i < len(spans) and spans[i][1] <= start:
            i += 1
        # The first span still open at ``start`` crosses the boundary iff it began before it.
        if joined and i < len(spans) and spans[i][0] < start:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined
