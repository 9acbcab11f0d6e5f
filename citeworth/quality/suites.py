"""The expectation suites: what each table of a clean CiteWorth dataset must satisfy.

Every expectation is named and graded in its meta: ``{"check": name, "severity": "critical" |
"soft", "why": ...}`` (GX's own ``severity`` field is set to match: critical / warning). A failed
critical check fails the gate; a failed soft check is a warning. One suite per table, keyed by the
table name of ``citeworth.quality.tables`` (the baseline's tables reuse the dataset's suites).
"""

from __future__ import annotations

from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe
from great_expectations.expectations.metadata_types import FailureSeverity

from citeworth.core.params import ParamsError
from citeworth.core.schema import LABELS, SPLITS
from citeworth.quality.config import ValidateParams
from citeworth.quality.markers import MARKERS
from citeworth.text.fields import CITEWORTH_FIELDS

CRITICAL, SOFT = "critical", "soft"
# The released CiteWorth label strings (the issue's {1, 0}).
ANY_MARKER = "no_residual_marker"


def expect(kind: type[gxe.Expectation], check: str, severity: str, why: str,
           **kwargs: Any) -> gxe.Expectation:
    """An expectation named ``check`` (unique within its suite), graded and explained in its meta."""
    expectation = kind(meta={"check": check, "why": why}, **kwargs)
    grade(expectation, severity)
    return expectation


def grade(expectation: gxe.Expectation, severity: str) -> None:
    """Set the severity in the meta (read by the gate) and in GX's own field."""
    expectation.meta["severity"] = severity
    expectation.severity = FailureSeverity.CRITICAL if severity == CRITICAL else FailureSeverity.WARNING


def sentence_expectations(params: ValidateParams) -> list[gxe.Expectation]:
    clean = 1.0 - params.marker_tolerance
    markers = [
        expect(gxe.ExpectColumnValuesToNotMatchRegex, f"no_{m.name}", CRITICAL if m.critical else SOFT,
               f"no sentence contains {m.what}", column="text", regex=m.pattern, mostly=clean)
        for m in MARKERS
    ]
    return [
        *markers,
        expect(gxe.ExpectColumnValuesToBeInSet, ANY_MARKER, CRITICAL,
               "no sentence carries a critical residual marker of any kind (Table 3's 'markers removed')",
               column="has_residual_marker", value_set=[False], mostly=clean),
        expect(gxe.ExpectColumnValuesToNotBeNull, "text_present", CRITICAL, "every sample has its text",
               column="text"),
        expect(gxe.ExpectColumnValuesToBeInSet, "starts_with_capital", CRITICAL,
               "a sentence starts with a capital letter (str.isupper of its first character)",
               column="starts_with_capital", value_set=[True]),
        expect(gxe.ExpectColumnValuesToMatchRegex, "ends_with_stop", CRITICAL,
               "a sentence ends with '.', '!' or '?'", column="text", regex=r"[.!?]$"),
        expect(gxe.ExpectColumnValueLengthsToBeBetween, "length_in_range", CRITICAL,
               f"a sentence has {params.min_chars} to {params.max_chars} characters",
               column="text", min_value=params.min_chars, max_value=params.max_chars),
        expect(gxe.ExpectColumnValuesToBeInSet, "label_valid", CRITICAL,
               f"the label is one of the released CiteWorth labels {list(LABELS)}",
               column="label", value_set=list(LABELS)),
        expect(gxe.ExpectColumnPairValuesToBeEqual, "label_matches_citations", CRITICAL,
               "a sentence is cite-worthy exactly when citation text was removed from it",
               column_A="cite_worthy", column_B="has_citation_text"),
        expect(gxe.ExpectColumnValuesToNotBeNull, "field_present", CRITICAL,
               "every paragraph has a field of study", column="field"),
        expect(gxe.ExpectColumnValuesToBeInSet, "field_valid", CRITICAL,
               "the paragraph has exactly one of the 10 CiteWorth fields",
               column="field", value_set=list(CITEWORTH_FIELDS)),
        expect(gxe.ExpectColumnValuesToNotBeNull, "paper_id_present", CRITICAL,
               "every paragraph names its paper", column="paper_id"),
        expect(gxe.ExpectColumnValuesToMatchRegex, "paper_id_not_blank", CRITICAL, "paper ids are not blank",
               column="paper_id", regex=r"\S"),
        expect(gxe.ExpectColumnValuesToNotBeNull, "section_idx_present", CRITICAL,
               "every paragraph has its index in the paper", column="section_idx"),
        expect(gxe.ExpectColumnValuesToBeBetween, "section_idx_valid", CRITICAL,
               "paragraph indices are non-negative", column="section_idx", min_value=0),
    ]


def paragraph_expectations() -> list[gxe.Expectation]:
    return [
        expect(gxe.ExpectColumnValuesToBeBetween, "has_sentences", CRITICAL, "every paragraph has samples",
               column="sentences", min_value=1),
        expect(gxe.ExpectCompoundColumnsToBeUnique, "paragraph_unique", CRITICAL,
               "a paragraph (paper_id, section_idx) occurs once in the dataset",
               column_list=["paper_id", "section_idx"]),
    ]


def split_expectations(params: ValidateParams) -> dict[str, list[gxe.Expectation]]:
    labels, fields = params.cite_worthy_share, params.field_share
    return {
        "split_papers": [
            expect(gxe.ExpectColumnValuesToBeUnique, "paper_in_one_split", CRITICAL,
                   "no paper has paragraphs in two splits", column="paper_id"),
        ],
        "split_identities": [
            expect(gxe.ExpectColumnValuesToBeUnique, "identity_in_one_split", CRITICAL,
                   "no paper has paragraphs in two splits in any of its copies (papers known by their "
                   "identifiers, or title, first author and year, across sources); none tolerated",
                   column="identity"),
        ],
        "split_texts": [
            expect(gxe.ExpectColumnValuesToBeUnique, "text_in_one_split", CRITICAL,
                   f"at most {params.max_cross_split_duplicates:.1%} of sentence texts recur in other splits",
                   column="text", mostly=1.0 - params.max_cross_split_duplicates),
        ],
        "split_labels": [
            expect(gxe.ExpectColumnDistinctValuesToEqualSet, "all_splits_present", CRITICAL,
                   "train, dev and test all have sentences", column="split", value_set=list(SPLITS)),
            expect(gxe.ExpectColumnValuesToBeBetween, "cite_worthy_share_in_bounds", CRITICAL,
                   f"each split's cite-worthy share lies in [{labels.min}, {labels.max}]",
                   column="cite_worthy_share", min_value=labels.min, max_value=labels.max),
        ],
        "split_fields": [
            expect(gxe.ExpectColumnValuesToBeBetween, "field_share_in_bounds", CRITICAL,
                   f"each field's share of each split's paragraphs lies in [{fields.min}, {fields.max}]",
                   column="share", min_value=fields.min, max_value=fields.max),
        ],
    }


def raw_expectations(params: ValidateParams) -> dict[str, list[gxe.Expectation]]:
    return {
        "raw_records": [
            expect(gxe.ExpectColumnValuesToBeNull, "record_readable", CRITICAL,
                   f"at most {params.max_bad_raw_records:.1%} of raw records are quarantined by their reader "
                   "(missing keys, bad offsets, malformed JSON)",
                   column="bad_reason", mostly=1.0 - params.max_bad_raw_records),
            expect(gxe.ExpectColumnValuesToMatchRegex, "paper_id_not_blank", CRITICAL,
                   "every read paper has an id", column="paper_id", regex=r"\S"),
            expect(gxe.ExpectColumnValuesToBeBetween, "has_paragraphs", SOFT,
                   "a read paper has body paragraphs", column="paragraphs", min_value=1),
            expect(gxe.ExpectColumnValuesToBeBetween, "has_fields_of_study", SOFT,
                   "a read paper names its fields of study", column="fields_of_study", min_value=1),
        ],
        "raw_spans": [
            expect(gxe.ExpectColumnValuesToBeBetween, "span_starts_inside", CRITICAL,
                   "a citation span starts inside its paragraph", column="start", min_value=0),
            expect(gxe.ExpectColumnPairValuesAToBeGreaterThanB, "span_not_empty", CRITICAL,
                   "a citation span ends after it starts", column_A="end", column_B="start"),
            expect(gxe.ExpectColumnPairValuesAToBeGreaterThanB, "span_ends_inside", CRITICAL,
                   "a citation span ends inside its paragraph",
                   column_A="text_chars", column_B="end", or_equal=True),
            expect(gxe.ExpectColumnValuesToBeInSet, "span_text_matches", CRITICAL,
                   "the span's text is the paragraph's text at its offsets",
                   column="matches_text", value_set=[True]),
        ],
    }


def suites(params: ValidateParams, raw: bool) -> dict[str, gx.ExpectationSuite]:
    """Every suite, named after the table it validates (the baseline reuses the dataset's)."""
    groups = {
        "sentences": sentence_expectations(params),
        "paragraphs": paragraph_expectations(),
        **split_expectations(params),
        **(raw_expectations(params) if raw else {}),
    }
    _soften(groups, params.soft_checks, params.soft_for_source)
    return {name: gx.ExpectationSuite(name=name, expectations=found) for name, found in groups.items()}


def _soften(groups: dict[str, list[gxe.Expectation]], by_source: dict[str, list[str]],
            names: list[str]) -> None:
    """Downgrade the named checks ("<suite>.<check>") to soft; an unknown name, for any source, is an
    error."""
    known = {f"{suite}.{e.meta['check']}": e for suite, found in groups.items() for e in found}
    for source, listed in by_source.items():
        if unknown := sorted(set(listed) - set(known)):
            raise ParamsError(f"validate.soft_checks.{source} names unknown check(s) {unknown}; "
                              f"checks: {sorted(known)}")
    for name in names:
        grade(known[name], SOFT)
