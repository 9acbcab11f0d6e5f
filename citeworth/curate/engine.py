"""The curation engine: ``Paper`` stream in, CiteWorth paragraph records out (§3 of the paper).

Per paper: the metadata filter, exactly one CiteWorth field, permissible sections and the
paper-level citation checks. Per paragraph, everything that can be decided on the text and its
citation spans is decided *before* sentence splitting (the expensive step): citations present and
sound, placeholders, missed citations, citation format and position. Only the surviving candidates
are split, in ``nlp.pipe`` batches, once each; then every sentence is labelled, cleaned and
checked. One bad sentence rejects its paragraph; every rejection is counted by reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields

from citeworth.core.paper import Paper, Paragraph
from citeworth.core.schema import (
    CITE_WORTHY,
    COLLECTION,
    FIELD_OF_STUDY,
    NOT_CITE_WORTHY,
    SOURCE_FIELDS,
    SUBJECT,
)
from citeworth.curate.config import CURATION_ERROR, CurationConfig
from citeworth.curate.filters import paper_rejection
from citeworth.text import citations as cit
from citeworth.text.fields import assign_field
from citeworth.text.sections import SectionFilter
from citeworth.text.sentences import Bounds, SentenceSplitter, attach_citation_only, join_across

OnError = Callable[[Paper, Exception], None]
OnKept = Callable[[Paper, int], None]


@dataclass
class CurationStats:
    """The curation funnel. Every paragraph seen is either kept or rejected with one reason:
    ``paragraphs == kept + sum(paragraphs_rejected.values())`` and every split candidate is kept
    or rejected after splitting."""

    papers: int = 0
    papers_rejected: Counter = field(default_factory=Counter)  # reason -> papers
    papers_kept: int = 0  # papers with at least one kept paragraph
    paragraphs: int = 0  # every body paragraph of every paper
    paragraphs_in_sections: int = 0  # of accepted papers, in permissible sections
    candidates: int = 0  # passed every check before splitting, so were split
    kept: int = 0
    paragraphs_rejected: Counter = field(default_factory=Counter)  # reason -> paragraphs
    sentences_split: int = 0  # sentences of the split candidates
    sentences: int = 0  # sentences of kept paragraphs
    cite_worthy: int = 0  # ... of which cite-worthy
    fields: Counter = field(default_factory=Counter)  # CiteWorth field -> kept paragraphs

    def merge(self, other: CurationStats) -> CurationStats:
        """Add ``other``'s counts into this one (shards -> run); returns self."""
        for f in dataclass_fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self

    def __add__(self, other: CurationStats) -> CurationStats:
        return CurationStats.from_dict(self.to_dict()).merge(other)

    def to_dict(self) -> dict:
        plain = {}
        for f in dataclass_fields(self):
            value = getattr(self, f.name)
            plain[f.name] = dict(sorted(value.items())) if isinstance(value, Counter) else value
        return dict(sorted(plain.items()))

    @classmethod
    def from_dict(cls, data: dict) -> CurationStats:
        known = {f.name: f for f in dataclass_fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"CurationStats: unknown key(s) {unknown}")
        return cls(**{k: Counter(v) if isinstance(v, dict) else v for k, v in data.items()})


@dataclass
class _Candidate:
    index: int  # paragraph index in the paper's body
    paragraph: Paragraph
    cites: list[cit.Citation]


@dataclass
class _PaperWork:
    paper: Paper
    field: str
    candidates: list[_Candidate]


class Curator:
    """Apply ``config``'s rules to a stream of papers; ``stats`` counts as it goes."""

    def __init__(self, config: CurationConfig, splitter: SentenceSplitter | None = None):
        """``splitter``: an already loaded one to share (else loaded from ``config`` on first use)."""
        self.config = config
        self.stats = CurationStats()
        self.sections = SectionFilter(config.permitted_sections)
        self._gap = re.compile(config.merge_gap)
        self._marks = cit.ascii_dashes if config.dash_ranges else str  # what the citation regexes read
        square = cit.round_author_year if config.square_author_year else str
        self._cite_marks = lambda text: square(self._marks(text))  # ... in a citation's own text
        self._splitter = splitter

    @property
    def splitter(self) -> SentenceSplitter:
        """Loaded on first use: a run that rejects everything before splitting never loads spaCy."""
        if self._splitter is None:
            self._splitter = SentenceSplitter(self.config.spacy_model, self.config.batch_size)
        return self._splitter

    def curate(self, papers: Iterable[Paper], on_error: OnError | None = None,
               on_kept: OnKept | None = None) -> Iterator[dict]:
        """Dataset records of the kept paragraphs, in input order (papers, then paragraphs).

        A paper whose curation raises is counted as rejected (``curation_error``) and handed to
        ``on_error`` with the exception (the stage quarantines it) and the run goes on; without
        ``on_error`` the exception propagates. ``on_kept(paper, records)`` hears of each paper with
        kept paragraphs just before its ``records`` records are yielded (the stage records its
        identity).
        """
        pending: list[_PaperWork] = []
        waiting = 0
        for paper in papers:
            try:
                work = self._select(paper)
            except Exception as exc:
                self._fail(paper, exc, on_error)
                self.stats.papers += 1
                self.stats.paragraphs += len(paper.paragraphs)
                self._reject_paper(paper, CURATION_ERROR)
                continue
            if work is None:
                continue
            pending.append(work)
            waiting += len(work.candidates)
            if waiting >= self.config.batch_size:
                yield from self._finish(pending, on_error, on_kept)
                pending, waiting = [], 0
        yield from self._finish(pending, on_error, on_kept)

    @staticmethod
    def _fail(paper: Paper, exc: Exception, on_error: OnError | None) -> None:
        if on_error is None:
            raise exc
        on_error(paper, exc)

    # --- before splitting ---------------------------------------------------------------------

    def _select(self, paper: Paper) -> _PaperWork | None:
        """Paper-level and pre-split paragraph rules; the paper's split candidates, or None.
        Every decision is taken before anything is counted, so a paper that raises counts once."""
        decision = assign_field(paper.metadata.get("field_scheme"), paper.fields_of_study,
                                self.config.multi_field, paper.metadata.get("venue_id"))
        reason = paper_rejection(paper, self.config) or decision.reason
        if not reason:
            permitted = [i for i, p in enumerate(paper.paragraphs) if self.sections.permits(p.section)]
            cites = {i: self._citations(paper.paragraphs[i]) for i in permitted
                     if paper.paragraphs[i].cite_spans}
            reason = self._paper_citation_reason(paper, permitted, cites)
        if not reason:  # only paragraphs in permitted sections are checked: the rest are counted
            verdicts = [self._paragraph_reason(paper.paragraphs[i], cites.get(i)) for i in permitted]
        self.stats.papers += 1
        self.stats.paragraphs += len(paper.paragraphs)
        if reason:
            return self._reject_paper(paper, reason)
        self.stats.paragraphs_in_sections += len(permitted)
        if outside := len(paper.paragraphs) - len(permitted):
            self.stats.paragraphs_rejected["section_not_permitted"] += outside
        candidates = []
        for i, why in zip(permitted, verdicts, strict=True):
            if why:
                self.stats.paragraphs_rejected[why] += 1
            else:
                candidates.append(_Candidate(i, paper.paragraphs[i], cites[i]))
        self.stats.candidates += len(candidates)
        return _PaperWork(paper, decision.field, candidates) if candidates else None

    def _reject_paper(self, paper: Paper, reason: str) -> None:
        self.stats.papers_rejected[reason] += 1
        self.stats.paragraphs_rejected["paper_rejected"] += len(paper.paragraphs)

    def _citations(self, paragraph: Paragraph) -> list[cit.Citation] | None:
        """The paragraph's citations (merged in citeworth mode), or None when its spans are unsound."""
        text, spans = paragraph.text, paragraph.cite_spans
        if cit.span_problem(text, spans):
            return None
        if self.config.spans_only:
            return [cit.trimmed(text, s) for s in sorted(spans, key=lambda s: s.start)]
        return cit.merge_citations(text, spans, self._gap, self.config.balance_brackets)

    def _paper_citation_reason(self, paper: Paper, permitted: list[int],
                               cites: dict[int, list[cit.Citation] | None]) -> str | None:
        spans = sum(len(paper.paragraphs[i].cite_spans) for i in permitted)
        if spans < self.config.min_paper_citation_spans:
            return "too_few_citations"
        check = self.config.first_citation_check
        if check == "off" or self.config.spans_only:
            return None
        first = next((found[0] for i in permitted if (found := cites.get(i))), None)
        if first is None:
            return None
        if check == "public_code":
            return None if cit.looks_like_citation(self._cite_marks(first.text)) else "citation_style"
        return None if self._format_ok(first) else "citation_style"

    def _paragraph_reason(self, paragraph: Paragraph, cites: list[cit.Citation] | None) -> str | None:
        """Why a paragraph of a permitted section is not split (None: it is a candidate)."""
        if (limit := self.config.max_paragraph_chars) is not None and len(paragraph.text) > limit:
            return "paragraph_too_long"
        if not paragraph.cite_spans:
            return "no_citation_spans"
        if cites is None:
            return "bad_span"
        if self.config.spans_only:
            return None
        text, config = paragraph.text, self.config
        if kinds := sorted(cit.placeholder_kinds(text) & config.placeholders):
            return f"{kinds[0]}_placeholder"
        if config.check_missed_citations and cit.missed_citation(
                self._marks(cit.remove_citations(text, 0, len(text), cites))):
            return "missed_citation"
        if not all(self._format_ok(c) for c in cites):
            return "citation_format"
        at_end = cit.could_end_sentence(text, cites, config.sentence_end_chars)
        if config.require_citation_at_end and not at_end:
            return "citation_not_at_end"
        return None

    def _format_ok(self, cite: cit.Citation) -> bool:
        kind = cit.citation_format(self._cite_marks(cite.text))
        if kind == "placeholder":
            return self.config.accept_placeholder_citations
        return kind in self.config.formats

    # --- after splitting ----------------------------------------------------------------------

    def _finish(self, pending: list[_PaperWork], on_error: OnError | None,
                on_kept: OnKept | None) -> Iterator[dict]:
        """Split every pending candidate in one batched pass, then label, check and emit."""
        if not pending:
            return
        splits = iter(self._split([c.paragraph.text for work in pending for c in work.candidates]))
        for work in pending:
            bounds = [next(splits) for _ in work.candidates]
            try:
                outcomes = [self._samples(c, b) for c, b in zip(work.candidates, bounds, strict=True)]
            except Exception as exc:
                self._fail(work.paper, exc, on_error)
                self.stats.paragraphs_rejected[CURATION_ERROR] += len(work.candidates)
                continue
            records = []
            for candidate, (outcome, sentences) in zip(work.candidates, outcomes, strict=True):
                self.stats.sentences_split += sentences
                if isinstance(outcome, str):
                    self.stats.paragraphs_rejected[outcome] += 1
                else:
                    records.append(self._record(work, candidate, outcome))
            self._count_kept(work.field, records)
            if records and on_kept:
                on_kept(work.paper, len(records))
            yield from records

    def _split(self, texts: list[str]) -> list[list[Bounds] | Exception]:
        """Sentence bounds per text; if the batch fails, each text alone, so that an error is
        pinned on its own paragraph (an Exception in its place)."""
        try:
            return list(self.splitter.split(texts))
        except Exception:
            return [self._split_one(text) for text in texts]

    def _split_one(self, text: str) -> list[Bounds] | Exception:
        try:
            return next(self.splitter.split([text]))
        except Exception as exc:
            return exc

    def _samples(self, candidate: _Candidate,
                 bounds: list[Bounds] | Exception) -> tuple[list[dict] | str, int]:
        """The paragraph's labelled sentences or the reason it is rejected, and its sentence count."""
        if isinstance(bounds, Exception):
            raise bounds
        text, cites = candidate.paragraph.text, candidate.cites
        spans = [(c.start, c.end) for c in cites]
        sentences = join_across(bounds, spans)
        if self.config.attach_trailing_citations and not self.config.spans_only:
            sentences = attach_citation_only(text, sentences, spans)
        return self._labelled(candidate, sentences), len(sentences)

    def _labelled(self, candidate: _Candidate, sentences: list[Bounds]) -> list[dict] | str:
        text, cites = candidate.paragraph.text, candidate.cites
        if not self.config.spans_only and len(sentences) < self.config.min_sentences:
            return "too_few_sentences"
        samples, i = [], 0
        for start, end in sentences:
            inside = []
            while i < len(cites) and cites[i].start < end:
                inside.append(cites[i])
                i += 1
            sample = self._sample(text, start, end, inside)
            if isinstance(sample, str):
                return sample
            samples.append(sample)
        return samples

    def _sample(self, text: str, start: int, end: int, cites: list[cit.Citation]) -> dict | str:
        original = text[start:end]
        if not cites:
            cleaned = cit.normalize_space(original)
            if not self.config.spans_only:
                # " ." is what a removed citation leaves, stripped from cite-worthy sentences: left in
                # the source's own uncited sentences, it would tell a model the label
                cleaned = cit.strip_hanging_punctuation(cleaned, " ", self.config.min_sentence_chars)
            reason = None if self.config.spans_only else self._sentence_reason(cleaned)
            return reason or {"text": cleaned, "label": NOT_CITE_WORTHY, "original_text": original,
                              "ref_ids": None, "citation_text": None}
        cleaned = cit.normalize_space(cit.remove_citations(text, start, end, cites))
        if not self.config.spans_only:
            if self.config.require_citation_at_end and not cit.at_sentence_end(text, cites, end):
                return "citation_not_at_end"
            cleaned = cit.strip_hanging_punctuation(cleaned, self.config.hanging_punctuation,
                                                    self.config.min_sentence_chars)
            if reason := self._sentence_reason(cleaned):
                return reason
        return {"text": cleaned, "label": CITE_WORTHY, "original_text": original,
                "ref_ids": [list(c.ref_ids) for c in cites], "citation_text": [c.text for c in cites]}

    def _sentence_reason(self, sentence: str) -> str | None:
        """Validity (§3.1 check 5), then missed and hanging citations (Appendix B) and empty brackets."""
        config = self.config
        if len(sentence) <= config.min_sentence_chars:
            return "sentence_too_short"
        if config.require_capital_start and not sentence[0].isupper():
            return "sentence_start"
        if sentence[-1] not in config.sentence_end_chars:
            return "sentence_end"
        if config.check_missed_citations and cit.missed_citation(self._marks(sentence)):
            return "missed_citation"
        if config.check_hanging_citations and cit.hanging_citation(sentence):
            return "hanging_citation"
        if config.check_missed_citations and cit.EMPTY_BRACKETS.search(sentence):
            return "empty_brackets"
        return None

    @staticmethod
    def _record(work: _PaperWork, candidate: _Candidate, samples: list[dict]) -> dict:
        paper, paragraph = work.paper, candidate.paragraph
        return {
            "paper_id": paper.paper_id,
            "section_idx": candidate.index,
            "section_title": paragraph.section,
            FIELD_OF_STUDY: [work.field],
            SOURCE_FIELDS: {"scheme": paper.metadata.get("field_scheme"),
                            "terms": list(paper.fields_of_study)},
            SUBJECT: paper.metadata.get("subject"),
            COLLECTION: paper.metadata.get("collection") or paper.source,
            "original_text": paragraph.text,
            "samples": samples,
            "source": paper.source,
            "release": paper.release,
            "shard": paper.shard,
        }

    def _count_kept(self, field_name: str, records: list[dict]) -> None:
        stats = self.stats
        if not records:
            return
        stats.kept += len(records)
        stats.papers_kept += 1
        stats.fields[field_name] += len(records)
        for record in records:
            stats.sentences += len(record["samples"])
            stats.cite_worthy += sum(s["label"] == CITE_WORTHY for s in record["samples"])
