"""GX validation results -> named outcomes: what failed, on how many rows, with example rows."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeworth.core.errors import StageFailed
from citeworth.quality.suites import CRITICAL
from citeworth.quality.tables import Table

log = logging.getLogger(__name__)

EXAMPLE_CHARS = 160  # long sentences are cut in messages; the Data Docs show them whole
_COLUMN_KWARGS = ("column", "column_A", "column_B", "column_list")
_AGGREGATE_KEYS = ("observed_value", "partial_missing_list", "partial_unexpected_list")


@dataclass(frozen=True)
class Outcome:
    table: str
    suite: str
    check: str
    severity: str
    why: str
    expectation: str
    success: bool
    element_count: int
    unexpected_count: int | None
    unexpected_percent: float | None
    examples: tuple[dict, ...] = ()
    # An aggregate expectation's findings (observed value, missing values): it has no rows to show.
    findings: dict | None = None
    error: str | None = None  # the exception GX caught while evaluating the expectation

    @property
    def name(self) -> str:
        return f"{self.suite}.{self.check}"

    @property
    def critical(self) -> bool:
        return self.severity == CRITICAL

    def metrics(self) -> dict:
        """The figures summary.json keeps (DVC metrics): no examples, no timestamps."""
        return {
            "success": self.success,
            "severity": self.severity,
            "expectation": self.expectation,
            "rows": self.element_count,
            "unexpected_count": self.unexpected_count,
            "unexpected_percent": _round(self.unexpected_percent),
        }

    def failure(self) -> dict:
        """A failed expectation as the results page shows it: its figures, why, and example rows."""
        return {**self.metrics(), "why": self.why, "examples": list(self.examples),
                "findings": self.findings, "error": self.error}

    def describe(self) -> str:
        """One failure: which expectation, how many rows, a few examples."""
        if self.error:
            return f"{self.name} ({self.expectation}) could not be evaluated: {self.error}"
        head = f"{self.name}: {self.why} -- violated"
        if self.findings is not None:
            head += ": " + ", ".join(f"{key}={value!r}" for key, value in self.findings.items())
        elif self.unexpected_count is not None:
            head += f" by {self.unexpected_count:,} of {self.element_count:,} rows"
            if self.unexpected_percent is not None:
                head += f" ({self.unexpected_percent:.3g}%)"
        lines = [head] + [f"    e.g. {_example_text(example)}" for example in self.examples]
        return "\n".join(lines)


def enforce(found: list[Outcome], site_dir: Path) -> None:
    """Log each failed soft expectation; raise ``StageFailed`` naming every failed critical one."""
    for outcome in found:
        if not outcome.success and not outcome.critical:
            log.warning("soft expectation failed: %s", outcome.describe())
    critical = [o for o in found if not o.success and o.critical]
    if critical:
        head = f"{len(critical)} critical expectation(s) failed (Data Docs: {site_dir}/index.html):"
        raise StageFailed("\n".join([head, *(o.describe() for o in critical)]))


def outcomes(table: Table, suite: str, validation: Any, examples: int) -> list[Outcome]:
    """The outcome of every expectation of ``validation`` (run on ``table`` with ``suite``)."""
    found = []
    for result in validation.results:
        config = result.expectation_config
        details = result.result or {}
        error = _error(result)
        found.append(Outcome(
            table=table.name,
            suite=suite,
            check=config.meta.get("check", config.type),
            severity=config.meta.get("severity", CRITICAL),
            why=config.meta.get("why", ""),
            expectation=config.type,
            success=bool(result.success) and error is None,
            element_count=int(details.get("element_count", len(table.frame))),
            unexpected_count=details.get("unexpected_count"),
            unexpected_percent=details.get("unexpected_percent"),
            examples=_examples(table, config.kwargs, details, examples),
            findings=_findings(details),
            error=error,
        ))
    return found


def _findings(details: dict) -> dict | None:
    """What an aggregate expectation (one without per-row counts) found."""
    if "element_count" in details:
        return None
    found = {key: _plain(details[key]) for key in _AGGREGATE_KEYS if details.get(key) not in (None, [])}
    for key, value in found.items():
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            found[key] = sorted(value)  # GX builds these from sets: keep messages stable
    return found or None


def _error(result: Any) -> str | None:
    info = result.exception_info or {}
    if info.get("raised_exception"):
        return info.get("exception_message") or "unknown error"
    return None


def _examples(table: Table, kwargs: dict, details: dict, limit: int) -> tuple[dict, ...]:
    """The offending rows (their key columns and checked columns) GX reported by index."""
    indices = details.get("partial_unexpected_index_list") or []
    checked = [c for key in _COLUMN_KWARGS for c in _as_list(kwargs.get(key))]
    columns = list(dict.fromkeys([*table.key_columns, *checked, *table.context_columns]))
    rows = table.frame.loc[list(indices)[:limit], columns]
    return tuple({name: _plain(value) for name, value in row.items()} for _, row in rows.iterrows())


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _plain(value: Any) -> Any:
    """numpy scalars -> Python, NaN -> None: examples and observed values print and dump cleanly."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _example_text(example: dict) -> str:
    parts = []
    for name, value in example.items():
        if isinstance(value, str) and len(value) > EXAMPLE_CHARS:
            value = value[: EXAMPLE_CHARS - 1] + "…"
        parts.append(f"{name}={value!r}")
    return " ".join(parts)


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)
