"""Sentence splitting with scispacy (§3.2), as character offsets into the paragraph.

The default pipeline runs offline: a blank English spaCy pipeline with scispacy's tokenizer and
its ``pysbd_sentencizer``. When ``spacy_model`` names an installed pipeline (e.g. a scispacy
``en_core_sci_*`` model) or a pipeline directory, its sentence boundaries are used instead.
Splitting is the expensive step of curation, so texts go through ``nlp.pipe`` in batches.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Iterator, Sequence

import spacy
from spacy.language import Language

from citeworth.core.errors import StageFailed

# Every whitespace character but " " (line breaks, tabs, no-break spaces, ...) -> " ".
_WHITESPACE_TO_SPACES = {c: " " for c in range(0x3001) if chr(c).isspace() and chr(c) != " "}
_WORD = re.compile(r"\w")
Bounds = tuple[int, int]  # [start, end) of a sentence, without surrounding whitespace


def load_pipeline(spacy_model: str | None = None) -> Language:
    if spacy_model is None:
        from scispacy import custom_sentence_segmenter  # noqa: F401  (registers pysbd_sentencizer)
        from scispacy.custom_tokenizer import combined_rule_tokenizer

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


class SentenceSplitter:
    """Batched sentence boundaries: ``split(texts)`` yields one list of ``Bounds`` per text."""

    def __init__(self, spacy_model: str | None = None, batch_size: int = 256):
        self.nlp = load_pipeline(spacy_model)
        self.batch_size = batch_size

    def split(self, texts: Iterable[str]) -> Iterator[list[Bounds]]:
        # Line breaks inside a paragraph are layout (LaTeX source lines in unarXive), not sentence
        # ends, but pysbd splits on them; and scispacy drops a pysbd sentence that ends in a
        # no-break space (its span does not align with the tokens). Plain spaces fix both, and a
        # one-for-one substitution keeps every offset valid.
        flat = (text.translate(_WHITESPACE_TO_SPACES) for text in texts)
        for doc in self.nlp.pipe(flat, batch_size=self.batch_size):
            yield [b for sent in doc.sents if (b := _stripped(doc.text, sent.start_char, sent.end_char))]


def _stripped(text: str, start: int, end: int) -> Bounds | None:
    """Bounds without leading/trailing whitespace (pysbd glues newlines onto sentences); None if blank."""
    piece = text[start:end]
    core = piece.strip()
    if not core:
        return None
    start += len(piece) - len(piece.lstrip())
    return start, start + len(core)


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
