"""The curation rules as parameters (``params.yaml`` ``curate.rules``).

Every rule of the CiteWorth paper (§3, Appendices A-B) and of its public code
(github.com/copenlu/cite-worth, ``dataset_creation/``) is a field here, with the paper's or the
code's value as the default, so a rule can be switched or tuned without touching code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MODES = ("citeworth", "spans-only")
CITATION_FORMATS = ("numeric", "author_year")
MULTI_FIELD_POLICIES = ("reject", "first")
FIRST_CITATION_CHECKS = ("public_code", "strict", "off")
# The reason a paper whose curation raised (a bug, or input no rule foresaw) is counted as rejected
# and quarantined under; the run goes on.
CURATION_ERROR = "curation_error"
# Paper metadata facts the filter checks; the readers fill them in ``Paper.metadata``.
PAPER_FACTS = ("has_abstract", "has_body_text", "has_bib_entries", "has_ref_entries", "has_inbound_citations")


@dataclass
class CurationConfig:
    # "citeworth": every rule below. "spans-only": the paper's Table 3 baseline -- the same paper,
    # field, section and citation-count selection, then only the given citation spans are removed
    # (no paper style check, placeholders, merging, format, position, missed-citation, sentence
    # count, hanging or validity checks).
    mode: str = "citeworth"

    # --- Paper filter (§3.1; the public code's `article_allowed`) ---------------------------
    # Facts a paper must have (each a ``Paper.metadata`` key, see PAPER_FACTS). A False fact
    # rejects the paper as "no_<fact>"; an unknown one (None) as "unknown_<fact>" ...
    required_facts: list[str] | None = None  # None = all of PAPER_FACTS
    # ... unless listed here: facts whose None means "this source cannot tell" and passes
    # (arXiv/unarXive do not know inbound citations).
    unknown_facts_pass: list[str] | None = None  # None = ["has_inbound_citations"]
    require_venue: bool = True  # a venue-like id (journal, venue, arXiv/ACL/PubMed/PMC id)
    min_year: int | None = None  # inclusive bounds on Paper.metadata["year"]; None = no bound
    max_year: int | None = None

    # --- Fields (§3.2: exactly one of the 10 CiteWorth fields per paragraph) ----------------
    # A paper whose fields map to several CiteWorth fields: "reject" it as "ambiguous_field"
    # (the paper's "exactly one category") or take the "first" listed field that maps.
    # arXiv papers are always decided by their primary category.
    multi_field: str = "reject"

    # --- Sections (§3.2, Appendix A) ---------------------------------------------------------
    # Permissible titles, compared after normalisation; None = Appendix A. Entries with * or ? are
    # patterns on the normalised title ("*methods"; "*" permits every section).
    sections: list[str] | None = None

    # --- Paper-level citation checks (public code's `extract_sections`) ---------------------
    # A paper needs at least this many citation spans in permissible sections (code: "> 5").
    min_paper_citation_spans: int = 6
    # The code's cheap test that the paper's citation style is usable: reject the paper
    # ("citation_style") when the first citation (after merging) of its permissible sections fails
    # it. "public_code": as the code, its text merely contains "[n]" or "...yyyy)" (a narrative
    # "Smith et al. (2001)" passes); "strict": it must be in an accepted format, so a narrative first
    # citation drops the paper (biased against author-year fields); "off": no paper-level test.
    first_citation_check: str = "public_code"

    # --- Paragraph checks before sentence splitting ------------------------------------------
    # Longer paragraphs are rejected as "paragraph_too_long" before any other check: no real
    # paragraph comes near it (the longest of the demo corpus and PLOS sample: ~10,700
    # characters), while splitting grows faster than the length (a 100 KB paragraph takes
    # seconds, 300 KB minutes) and spaCy refuses texts over 1,000,000 characters. Such input
    # is extraction debris or an attack (a small XML file whose entities expand to megabytes).
    # None = no limit.
    max_paragraph_chars: int | None = 20_000
    # Placeholder kinds (unarXive's ``{{formula:...}}``, ``{{figure:...}}``, ``{{table:...}}``)
    # whose presence rejects the paragraph as "<kind>_placeholder": the token stands for content
    # the text lost in extraction, so the sentence is not well formed.
    reject_placeholders: list[str] | None = None  # None = ["formula", "figure", "table"]
    # Adjacent citation spans merge into one when only this (regex, full match) separates them:
    # the code merged spans on the same or the next token, e.g. "[1], [2]" or "(A 2001; B 2002)".
    merge_gap: str = r"[\s,;\u2013-]*"  # also "[1]-[3]", "[1]\u2013[3]"
    # Extend a merged span over a bracket the parser left just outside it, e.g. "(Green 1993 )".
    balance_brackets: bool = True
    citation_formats: list[str] | None = None  # accepted formats; None = all of CITATION_FORMATS
    # Placeholder citations (unarXive ``{{cite:...}}``) have no surface form to check but an
    # exact extent, so they count as format-valid.
    accept_placeholder_citations: bool = True
    check_missed_citations: bool = True  # Appendix B numeric and year regexes, plus "et al"
    # Read an en or em dash in a citation as "-" in the format and missed-citation checks, so
    # "[1\u20133]" is a numeric range as "[1-3]" is (the paper's regex knows only "-"; PLOS prints "\u2013").
    dash_ranges: bool = True
    require_citation_at_end: bool = True  # only punctuation/whitespace may follow a citation

    # --- Sentence checks (after splitting) ---------------------------------------------------
    # A split-off "sentence" of citations only ("work.{{cite:...}}" cut after the period, common
    # in LaTeX sources) joins the sentence before it instead of failing as too short.
    attach_trailing_citations: bool = True
    min_sentences: int = 3  # sentences a paragraph needs (public code)
    # Hanging punctuation removed before the final mark after citation removal (public code).
    hanging_punctuation: str = " @&:;/-,\n\t"
    check_hanging_citations: bool = True  # Appendix B hanging-citation regex
    min_sentence_chars: int = 20  # a sentence must be longer than this (§3.1)
    require_capital_start: bool = True
    sentence_end_chars: str = ".!?"

    # --- Sentence splitter ------------------------------------------------------------------
    # None = blank English pipeline + scispacy's tokenizer + pysbd_sentencizer (offline);
    # a name or path loads that installed spaCy/scispacy pipeline (e.g. "en_core_sci_sm").
    spacy_model: str | None = None
    batch_size: int = 256  # paragraphs per nlp.pipe batch

    def __post_init__(self) -> None:
        _check_choice("mode", self.mode, MODES)
        _check_choice("multi_field", self.multi_field, MULTI_FIELD_POLICIES)
        _check_choice("first_citation_check", self.first_citation_check, FIRST_CITATION_CHECKS)
        for fact in [*(self.required_facts or ()), *(self.unknown_facts_pass or ())]:
            _check_choice("required_facts/unknown_facts_pass entry", fact, PAPER_FACTS)
        for fmt in self.citation_formats or ():
            _check_choice("citation_formats entry", fmt, CITATION_FORMATS)
        try:
            re.compile(self.merge_gap)
        except re.error as exc:
            raise ValueError(f"curate.rules.merge_gap {self.merge_gap!r} is not a regex: {exc}") from exc
        if self.max_paragraph_chars is not None and self.max_paragraph_chars < 1:
            raise ValueError(f"curate.rules.max_paragraph_chars must be >= 1 or null, "
                             f"got {self.max_paragraph_chars}")
        if self.batch_size < 1:
            raise ValueError(f"curate.rules.batch_size must be >= 1, got {self.batch_size}")

    @property
    def facts(self) -> tuple[str, ...]:
        return PAPER_FACTS if self.required_facts is None else tuple(self.required_facts)

    @property
    def facts_unknown_pass(self) -> frozenset[str]:
        default = ["has_inbound_citations"]
        return frozenset(default if self.unknown_facts_pass is None else self.unknown_facts_pass)

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


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"curate.rules.{name} is {value!r}; choose one of {', '.join(choices)}")
