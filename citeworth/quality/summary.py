"""``summary.json``: every expectation's figures, and residual-marker rates beside the baseline's.

Kept free of timestamps and example rows so that two runs over the same data are byte-identical
and ``dvc metrics diff`` shows only real changes.
"""

from __future__ import annotations

from citeworth.quality.markers import MARKERS
from citeworth.quality.results import Outcome
from citeworth.quality.suites import ANY_MARKER

MARKER_CHECKS = frozenset({f"no_{m.name}" for m in MARKERS} | {ANY_MARKER})


def summary(rows: dict[str, int], ours: list[Outcome], theirs: list[Outcome], baseline: dict) -> dict:
    """``rows``: table sizes; ``ours`` gate, ``theirs`` (the baseline's) are only reported;
    ``baseline``: where the baseline came from and whether it was there."""
    critical = sorted(o.name for o in ours if not o.success and o.critical)
    return {
        "success": not critical,
        "critical_failures": critical,
        "warnings": sorted(o.name for o in ours if not o.success and not o.critical),
        "rows": dict(sorted(rows.items())),
        "expectations": _metrics(ours),
        "baseline": {**baseline, "expectations": _metrics(theirs)},
        "residual_markers": marker_rates(ours, theirs),
        "markers_removed_percent": {"ours": markers_removed(ours), "baseline": markers_removed(theirs)},
    }


def marker_rates(ours: list[Outcome], theirs: list[Outcome]) -> dict:
    """Percent of sentences with each kind of residual marker: ours beside the spans-only baseline."""
    mine, baseline = _marker_percents(ours), _marker_percents(theirs)
    return {check: {"ours_percent": mine[check], "baseline_percent": baseline.get(check)}
            for check in sorted(mine)}


def markers_removed(found: list[Outcome]) -> float | None:
    """Table 3's 'markers removed': the percent of sentences without any residual marker."""
    percent = _marker_percents(found).get(ANY_MARKER)
    return None if percent is None else round(100.0 - percent, 6)


def _metrics(found: list[Outcome]) -> dict:
    return {o.name: o.metrics() for o in sorted(found, key=lambda o: o.name)}


def _marker_percents(found: list[Outcome]) -> dict[str, float | None]:
    return {o.check: o.metrics()["unexpected_percent"] for o in found
            if o.suite == "sentences" and o.check in MARKER_CHECKS}
