"""The curation rules as parameters (``params.yaml`` ``curate.rules``).

Every rule of the CiteWorth paper (§3, Appendices A-B) and of its public code
(github.com/copenlu/cite-worth, ``dataset_creation/``) is a field here, with the paper's or the
code's value as the default, so a rule can be switched or tuned without touching code.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from citeworth.core.params import Params
from citeworth.text.citations import HANGING_PUNCTUATION, MIN_SENTENCE_CHARS
from citeworth.text.sections import appendix_a_titles
from citeworth.text.sentences import MAX_PARAGRAPH_CHARS

MODES = ("citeworth", "spans-only")
CITATION_FORMATS = ("numeric", "author_year")
MULTI_FIELD_POLICIES = ("reject", "first")
FIRST_CITATION_CHECKS = ("public_code", "strict", "off")
# The reason a paper whose curation raised (a bug, or input no rule foresaw) is counted as rejected
# and quarantined under; the run goes on.
CURATION_ERROR = "curation_error"
# Paper metadata facts the filter checks; the readers fill them in ``Paper.metadata``.
PAPER_FACTS = ("has_abstract", "has_body_text", "has_bib_entries", "has_ref_entries", "has_inbound_citations")


Mode = Literal[MODES]
Fact = Literal[PAPER_FACTS]


class CurationConfig(Params):
    mode: Mode = "citeworth"
    """citeworth: every rule below. spans-only: the paper's Table 3 baseline -- the same paper, field,
    section and citation-count selection, then only the given citation spans are removed (no paper
    style check, placeholders, merging, format, position, missed-citation, sentence count, hanging or
    validity checks)."""

    # --- Paper filter (§3.1; the public code's `article_allowed`) ---------------------------
    required_facts: list[Fact] | None = None
    """Facts a paper must have (Paper.metadata keys). A False fact rejects the paper as "no_<fact>",
    an unknown one (None) as "unknown_<fact>", unless listed in unknown_facts_pass. null = all."""
    unknown_facts_pass: list[Fact] | None = None
    """Facts whose None means "this source cannot tell" and passes (arXiv/unarXive do not know
    inbound citations). null = [has_inbound_citations]."""
    require_venue: bool = True
    """A venue-like id (journal, venue, arXiv/ACL/PubMed/PMC id)."""
    min_year: int | None = None
    """Inclusive lower bound on Paper.metadata["year"]; null = no bound."""
    max_year: int | None = None
    """Inclusive upper bound on Paper.metadata["year"]; null = no bound."""

    # --- Fields (§3.2: exactly one of the 10 CiteWorth fields per paragraph) ----------------
    multi_field: Literal[MULTI_FIELD_POLICIES] = "reject"
    """A paper whose fields map to several CiteWorth fields: "reject" it as "ambiguous_field" (the
    paper's "exactly one category") or take the "first" listed field that maps. arXiv papers are
    always decided by their primary category."""

    # --- Sections (§3.2, Appendix A) ---------------------------------------------------------
    sections: list[str] | None = None
    """Permissible titles, compared after normalisation; null = Appendix A. Entries with * or ? are
    patterns on the normalised title ("*methods"; "*" permits every section)."""
    extra_sections: list[str] = []
    """Titles permitted beside ``sections``, in the same form: e.g. "materials and methods", the
    plural of Appendix A's "material and methods" and the title life-science journals print (the
    list gives six other titles in both numbers; the code's exact match misses this one)."""

    # --- Paper-level citation checks (public code's `extract_sections`) ---------------------
    min_paper_citation_spans: int = 6
    """A paper needs at least this many citation spans in permissible sections (code: "> 5")."""
    first_citation_check: Literal[FIRST_CITATION_CHECKS] = "public_code"
    """The code's cheap test that the paper's citation style is usable: reject the paper
    ("citation_style") when the first citation (after merging) of its permissible sections fails it.
    public_code: as the code, its text merely contains "[n]" or "...yyyy)" (a narrative "Smith et al.
    (2001)" passes); strict: it must be in an accepted format, so a narrative first citation drops
    the paper (biased against author-year fields); off: no paper-level test."""

    # --- Paragraph checks before sentence splitting ------------------------------------------
    max_paragraph_chars: int | None = Field(MAX_PARAGRAPH_CHARS, ge=1)
    """Longer paragraphs are rejected as "paragraph_too_long" before any other check: no real
    paragraph comes near it (the longest of the demo corpus and PLOS sample: ~10,700 characters),
    while splitting grows faster than the length and spaCy refuses texts over 1,000,000 characters.
    Such input is extraction debris or an attack (entities expanding to megabytes). null = no limit."""
    reject_placeholders: list[str] | None = None
    """Placeholder kinds (unarXive's {{formula:...}}, {{figure:...}}, {{table:...}}) whose presence
    rejects the paragraph as "<kind>_placeholder": the token stands for content the text lost in
    extraction. null = [formula, figure, table]."""
    merge_gap: str = r"[\s,;\u2013-]*"
    """Adjacent citation spans merge into one when only this (regex, full match) separates them, as
    the code merged spans on the same or the next token: "[1], [2]", "(A 2001; B 2002)", "[1]-[3]"."""
    balance_brackets: bool = True
    """Extend a merged span over a bracket the parser left just outside it, e.g. "(Green 1993 )"."""
    citation_formats: list[Literal[CITATION_FORMATS]] | None = None
    """Accepted citation formats; null = all."""
    square_author_year: bool = True
    """Read an author-year citation in square brackets ("[Smith et al., 2009]", as early eLife
    articles print them) as the paper's regexes read a parenthetical one, in the format and
    first-citation checks; the paper's regexes know only "(Smith et al., 2009)"."""
    accept_placeholder_citations: bool = True
    """Placeholder citations (unarXive {{cite:...}}) have no surface form to check but an exact
    extent, so they count as format-valid."""
    check_missed_citations: bool = True
    """Appendix B numeric and year regexes, plus "et al"; and a sentence with empty brackets ("()",
    "[]": a span the source lost, as in "lineage cocktail (), Sca1") drops its paragraph as
    "empty_brackets", a residual marker the gate refuses."""
    dash_ranges: bool = True
    """Read an en or em dash in a citation as "-" in the format and missed-citation checks, so an en
    dash range is numeric as "[1-3]" is (the paper's regex knows only "-"; PLOS prints en dashes)."""
    require_citation_at_end: bool = True
    """Only punctuation/whitespace may follow a citation."""

    # --- Sentence checks (after splitting) ---------------------------------------------------
    attach_trailing_citations: bool = True
    """A split-off "sentence" of citations only ("work.{{cite:...}}" cut after the period, common in
    LaTeX sources) joins the sentence before it instead of failing as too short."""
    min_sentences: int = 3
    """Sentences a paragraph needs (public code)."""
    hanging_punctuation: str = HANGING_PUNCTUATION
    """Hanging punctuation removed before the final mark after citation removal (public code)."""
    check_hanging_citations: bool = True
    """Appendix B hanging-citation regex."""
    min_sentence_chars: int = MIN_SENTENCE_CHARS
    """A sentence must be longer than this (§3.1)."""
    require_capital_start: bool = True
    """A sentence must start with a capital letter."""
    sentence_end_chars: str = ".!?"
    """A sentence must end with one of these characters."""

    # --- Sentence splitter ------------------------------------------------------------------
    spacy_model: str | None = None
    """null = blank English pipeline + scispacy's tokenizer + pysbd_sentencizer (offline); a name or
    path loads that installed spaCy/scispacy pipeline (e.g. "en_core_sci_sm")."""
    batch_size: int = Field(256, ge=1)
    """Paragraphs per nlp.pipe batch."""

    @field_validator("merge_gap")
    @classmethod
    def _regex(cls, merge_gap: str) -> str:
        try:
            re.compile(merge_gap)
        except re.error as exc:
            raise ValueError(f"not a regex: {exc}") from exc
        return merge_gap

    @property
    def facts(self) -> tuple[str, ...]:
        return PAPER_FACTS if self.required_facts is None else tuple(self.required_facts)

    @property
    def facts_unknown_pass(self) -> frozenset[str]:
        default = ["has_inbound_citations"]
        return frozenset(default if self.unknown_facts_pass is None else self.unknown_facts_pass)

    @property
    def permitted_sections(self) -> list[str]:
        """``sections`` (Appendix A when null) and ``extra_sections``: what SectionFilter takes."""
        return [*(appendix_a_titles() if self.sections is None else self.sections), *self.extra_sections]

    @property
    def formats(self) -> frozenset[str]:
        return frozenset(CITATION_FORMATS if self.citation_formats is None else self.citation_formats)

    @property
    def placeholders(self) -> frozenset[str]:
        default = ["formula", "figure", "table"]
        return frozenset(default if self.reject_placeholders is None else self.reject_placeholders)

    @property
    def spans_only(self) -> bool:
        return self.mode == "spans-only"
