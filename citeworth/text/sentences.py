"""Sentence splitting with scispacy (§3.2), as character offsets into the paragraph.

The default pipeline runs offline: a blank English spaCy pipeline with scispacy's tokenizer and
its ``pysbd_sentencizer``. When ``spacy_model`` names an installed pipeline (e.g. a scispacy
``en_core_sci_*`` model) or a pipeline directory, its sentence boundaries are used instead.
Splitting is the expensive step of curation, so texts go through the pipeline in batches.

For the default pipeline, ``SentenceSplitter`` computes the boundaries ``pysbd_sentencizer`` +
``doc.sents`` give straight from the tokens' offsets and pysbd's sentences, without the
per-token Python objects scispacy's component creates (its loop and ``doc.sents`` cost as much
as the tokenizer); pysbd itself runs with compiled patterns (see pysbd_regex.py). Tests compare
both with the stock pipeline on real papers. Either way a cut at "et. al." is joined again
(``join_et_al``).
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence

import pysbd
import spacy
from scispacy.consts import ABBREVIATIONS
from spacy.attrs import IDX, LENGTH
from spacy.language import Language
from spacy.tokens import Doc

from citeworth.core.errors import StageFailed

# Every whitespace character but " " (line breaks, tabs, no-break spaces, ...) -> " ".
_WHITESPACE_TO_SPACES = {c: " " for c in range(0x3001) if chr(c).isspace() and chr(c) != " "}
_WORD = re.compile(r"\w")
Bounds = tuple[int, int]  # [start, end) of a sentence, without surrounding whitespace
_SCISPACY_ABBREVIATIONS = frozenset(ABBREVIATIONS)
_ET_END = re.compile(r"(?<![\w.])et\.\Z")
_AL_START = re.compile(r"al\b")


def load_pipeline(spacy_model: str | None = None) -> Language:
    if spacy_model is None:
        from scispacy import custom_sentence_segmenter  # noqa: F401  (registers pysbd_sentencizer)
        from scispacy.custom_tokenizer import combined_rule_tokenizer

        from citeworth.text import pysbd_regex

        pysbd_regex.install()

        nlp = spacy.blank("en")
        with warnings.catch_warnings():  # spaCy warns about a character class in scispacy's regexes
            warnings.simplefilter("ignore", FutureWarning)
            tokenizer = combined_rule_tokenizer(nlp)
        # pysbd ends a sentence at "work." even when a citation is glued to it ("work.{{cite:...}}",
        # "work.[3]"), but scispacy drops a sentence whose end is not a token boundary: add one there.
        infixes = tokenizer.infix_finditer.__self__.pattern
        tokenizer.infix_finditer = re.compile(rf"{infixes}|(?<=[.!?])(?=[\[{{])").finditer
        nlp.tokenizer = tokenizer
        nlp.add_pipe("pysbd_sentencizer")
        return nlp
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
    tokenizer = load_pipeline().tokenizer
    return lambda text: sum(not token.is_space for token in tokenizer(text))


class SentenceSplitter:
    """Batched sentence boundaries: ``split(texts)`` yields one list of ``Bounds`` per text."""

    def __init__(self, spacy_model: str | None = None, batch_size: int = 256):
        self.nlp = load_pipeline(spacy_model)
        self.batch_size = batch_size
        self._segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True) if spacy_model is None \
            else None

    def split(self, texts: Iterable[str]) -> Iterator[list[Bounds]]:
        # Line breaks inside a paragraph are layout (LaTeX source lines in unarXive), not sentence
        # ends, but pysbd splits on them; and scispacy drops a pysbd sentence that ends in a
        # no-break space (its span does not align with the tokens). Plain spaces fix both, and a
        # one-for-one substitution keeps every offset valid.
        flat = (text.translate(_WHITESPACE_TO_SPACES) for text in texts)
        if self._segmenter is None:
            for doc in self.nlp.pipe(flat, batch_size=self.batch_size):
                text = doc.text
                yield join_et_al(text, [b for sent in doc.sents
                                        if (b := _stripped(text, sent.start_char, sent.end_char))])
        else:
            for text in flat:
                yield join_et_al(text, self._pysbd_sentences(text, self.nlp.tokenizer(text)))

    def _pysbd_sentences(self, text: str, doc: Doc) -> list[Bounds]:
        """What scispacy's ``pysbd_sentencizer`` then ``doc.sents`` give, from token offsets: a
        token starts a sentence when a pysbd sentence (trailing spaces off) is exactly a run of
        tokens starting with it and the token before it is not one of scispacy's abbreviations.
        (The component's line-break rules never fire: ``split`` leaves no line breaks.)"""
        if not len(doc):
            return []
        tokens = doc.to_array([IDX, LENGTH]).tolist()  # [start, length] per token
        token_at = {start: i for i, (start, _) in enumerate(tokens)}
        token_ends = {start + length for start, length in tokens}
        firsts = set()
        for sentence in self._segmenter.segment(text):
            end = sentence.end - (len(sentence.sent) - len(sentence.sent.rstrip(" ")))
            i = token_at.get(sentence.start)
            if i and end > sentence.start and end in token_ends:  # i == 0 starts the first sentence anyway
                before, length = tokens[i - 1]
                if text[before:before + length] not in _SCISPACY_ABBREVIATIONS:
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
