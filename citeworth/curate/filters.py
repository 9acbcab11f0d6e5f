"""The paper filter of §3.1 (the public code's ``article_allowed``) on ``Paper.metadata``.

Readers fill normalised facts: ``has_abstract``, ``has_body_text``, ``has_bib_entries``,
``has_ref_entries``, ``has_inbound_citations`` (True / False / None = the source cannot tell),
``venue_id`` and ``year``. Body text and bibliography fall back to what the paper itself holds
when the source states nothing.
"""

from __future__ import annotations

from citeworth.core.paper import Paper
from citeworth.curate.config import CurationConfig

_FROM_CONTENT = {
    "has_body_text": lambda paper: bool(paper.paragraphs),
    "has_bib_entries": lambda paper: bool(paper.bib_entries),
}


def paper_fact(paper: Paper, fact: str) -> bool | None:
    value = paper.metadata.get(fact)
    if value is None and fact in _FROM_CONTENT:
        return _FROM_CONTENT[fact](paper)
    return None if value is None else bool(value)


def paper_rejection(paper: Paper, config: CurationConfig) -> str | None:
    """The reason code the paper fails the filter for, or None when it passes."""
    for fact in config.facts:
        value = paper_fact(paper, fact)
        if value is False:
            return f"no_{fact.removeprefix('has_')}"
        if value is None and fact not in config.facts_unknown_pass:
            return f"unknown_{fact.removeprefix('has_')}"
    if config.require_venue and not paper.metadata.get("venue_id"):
        return "no_venue"
    return _year_rejection(paper.metadata.get("year"), config)


def _year_rejection(year: int | None, config: CurationConfig) -> str | None:
    if config.min_year is None and config.max_year is None:
        return None
    if year is None:
        return "unknown_year"
    too_early = config.min_year is not None and int(year) < config.min_year
    too_late = config.max_year is not None and int(year) > config.max_year
    return "year_out_of_range" if too_early or too_late else None
