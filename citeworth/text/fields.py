"""Map a paper's fields of study to exactly one of the 10 CiteWorth fields (§3.2).

Four schemes arrive in ``Paper.metadata["field_scheme"]``:

- ``mag``: Microsoft Academic Graph level-0 fields (S2ORC legacy ``mag_field_of_study``);
- ``s2``: Semantic Scholar fields of study (datasets API ``s2fieldsofstudy``);
- ``arxiv``: arXiv categories, primary category first (unarXive, arXiv metadata);
- ``pmc``: CiteWorth field names the JATS reader derived from PMC subjects / journal titles
  (citeworth/sources/jats.py), read like MAG names;
- ``plos``: PLOS subject taxonomy paths ("Biology and life sciences/Neuroscience/Brain mapping").

MAG, S2 and pmc name the CiteWorth fields directly (other fields such as Sociology map to none); a paper
whose fields map to several CiteWorth fields is ambiguous. An arXiv paper is decided by its
primary category alone, through arXiv's archive taxonomy.

A PLOS article lists many taxonomy paths (PLOS's indexer assigns every article dozens, across
branches), so exactly-one would reject most of them. Its primary field: each path votes for the
field of its longest prefix in ``data/plos_fields.tsv`` (branches that name no discipline, such as
"Research and analysis methods", do not vote); the field with the most votes wins; a tie goes to
the journal's field (PLOS Medicine -> Medicine) when it is among the tied, else the paper is
ambiguous (or, with ``multi_field: first``, the tied field listed first). An article without votes
takes its journal's field (PLOS ONE has none).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
SCHEMES = ("mag", "s2", "arxiv", "pmc", "plos")
PLOS_TABLE = Path(__file__).parent / "data" / "plos_fields.tsv"
JOURNAL = "journal:"  # a PLOS table row naming a journal, not a taxonomy term


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


def assign_field(scheme: str | None, fields: Sequence[str], multi_field: str = "reject",
                 venue: str | None = None) -> FieldDecision:
    """Exactly one CiteWorth field for a paper, or the reason there is none (``venue``: the journal,
    which a PLOS paper's field may come from)."""
    if scheme == "plos":
        return plos_primary_field(fields, venue, multi_field)
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


def plos_primary_field(paths: Sequence[str], journal: str | None,
                       multi_field: str = "reject") -> FieldDecision:
    """The primary CiteWorth field of a PLOS article (the rule is in the module docstring)."""
    votes = Counter(field for path in paths if (field := plos_path_field(path)))
    journal_field = _plos_table().get((f"{JOURNAL}{(journal or '').strip().lower()}",))
    if not votes:
        if journal_field:
            return FieldDecision(journal_field)
        return FieldDecision(None, "no_citeworth_field" if paths else "no_fields_of_study")
    most = max(votes.values())
    leaders = [field for field, n in votes.items() if n == most]  # in the order first voted for
    if len(leaders) == 1:
        return FieldDecision(leaders[0])
    if journal_field in leaders:
        return FieldDecision(journal_field)
    return FieldDecision(leaders[0]) if multi_field == "first" else FieldDecision(None, "ambiguous_field")


def plos_path_field(path: str) -> str | None:
    """The field of a PLOS taxonomy path: its longest listed prefix's (None: no discipline or unlisted)."""
    parts = _components(path)
    table = _plos_table()
    for n in range(len(parts), 0, -1):
        if parts[:n] in table:
            return table[parts[:n]]
    return None


def plos_terms_listed(path: str) -> bool:
    """Does the table list a prefix of ``path`` (with a field or as a branch that names none)?"""
    parts = _components(path)
    return any(parts[:n] in _plos_table() for n in range(1, len(parts) + 1))


def _components(path: str) -> tuple[str, ...]:
    return tuple(part.strip().lower() for part in path.split("/"))


@functools.cache
def _plos_table() -> dict[tuple[str, ...], str | None]:
    """Lower-cased term components (or ``("journal:<name>",)``) -> CiteWorth field or None."""
    table: dict[tuple[str, ...], str | None] = {}
    lines = PLOS_TABLE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.startswith("#"):
            continue
        term, field, _why = line.split("\t")
        key = (term.lower(),) if term.startswith(JOURNAL) else _components(term)
        if field and field not in CITEWORTH_FIELDS:
            raise ValueError(f"{PLOS_TABLE.name}:{number}: {field!r} is not a CiteWorth field")
        if table.get(key, field or None) != (field or None):
            raise ValueError(f"{PLOS_TABLE.name}:{number}: {term!r} is listed twice with different fields")
        table[key] = field or None
    return table
