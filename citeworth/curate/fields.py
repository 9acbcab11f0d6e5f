"""Map a paper's fields of study to exactly one of the 10 CiteWorth fields (§3.2).

Four schemes arrive in ``Paper.metadata["field_scheme"]``:

- ``mag``: Microsoft Academic Graph level-0 fields (S2ORC legacy ``mag_field_of_study``);
- ``s2``: Semantic Scholar fields of study (datasets API ``s2fieldsofstudy``);
- ``arxiv``: arXiv categories, primary category first (unarXive, arXiv metadata);
- ``pmc``: CiteWorth field names the JATS reader derived from PMC subjects / journal titles
  (citeworth/sources/jats.py), read like MAG names.

MAG, S2 and pmc name the CiteWorth fields directly (other fields such as Sociology map to none); a paper
whose fields map to several CiteWorth fields is ambiguous. An arXiv paper is decided by its
primary category alone, through arXiv's archive taxonomy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CITEWORTH_FIELDS = (
    "Biology", "Medicine", "Engineering", "Chemistry", "Psychology",
    "Computer Science", "Materials Science", "Economics", "Mathematics", "Physics",
)
_BY_LOWER = {name.lower(): name for name in CITEWORTH_FIELDS}

# arXiv archives (the part of a category before the dot), incl. pre-2007 archive names.
_ARXIV_ARCHIVES = {
    "cs": "Computer Science", "cmp-lg": "Computer Science",
    "math": "Mathematics", "stat": "Mathematics", "bayes-an": "Mathematics",
    "alg-geom": "Mathematics", "dg-ga": "Mathematics", "funct-an": "Mathematics", "q-alg": "Mathematics",
    "q-bio": "Biology",
    "eess": "Engineering",
    "econ": "Economics", "q-fin": "Economics",
    # arXiv's physics group: math-ph and nlin are physics archives despite their names.
    **dict.fromkeys(
        ["physics", "astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph",
         "nlin", "nucl-ex", "nucl-th", "quant-ph", "acc-phys", "ao-sci", "atom-ph", "chem-ph",
         "plasm-ph", "supr-con", "mtrl-th", "chao-dyn", "patt-sol", "adap-org", "solv-int", "comp-gas"],
        "Physics"),
}
# Subject classes whose archive would misfile them among the CiteWorth fields.
_ARXIV_CATEGORIES = {
    "physics.chem-ph": "Chemistry",
    "cond-mat.mtrl-sci": "Materials Science",
    "physics.med-ph": "Medicine",
}
SCHEMES = ("mag", "s2", "arxiv", "pmc")


@dataclass(frozen=True)
class FieldDecision:
    field: str | None  # the one CiteWorth field, or None when rejected
    reason: str | None = None  # rejection reason code when ``field`` is None


def arxiv_field(category: str) -> str | None:
    category = category.strip()
    if category in _ARXIV_CATEGORIES:
        return _ARXIV_CATEGORIES[category]
    return _ARXIV_ARCHIVES.get(category.split(".")[0])


def mapped_fields(scheme: str, fields: Sequence[str]) -> list[str]:
    """The CiteWorth fields ``fields`` map to, distinct, in the order listed (arXiv: primary only)."""
    if scheme == "arxiv":
        candidates = [arxiv_field(fields[0])] if fields else []
    else:
        candidates = [_BY_LOWER.get(name.strip().lower()) for name in fields]
    return list(dict.fromkeys(f for f in candidates if f))


def assign_field(scheme: str | None, fields: Sequence[str], multi_field: str = "reject") -> FieldDecision:
    """Exactly one CiteWorth field for a paper, or the reason there is none."""
    if not fields:
        return FieldDecision(None, "no_fields_of_study")
    if scheme not in SCHEMES:
        return FieldDecision(None, "unknown_field_scheme")
    found = mapped_fields(scheme, fields)
    if not found:
        return FieldDecision(None, "no_citeworth_field")
    if len(found) > 1 and multi_field == "reject":
        return FieldDecision(None, "ambiguous_field")
    return FieldDecision(found[0])
