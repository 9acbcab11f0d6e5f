"""What a check runs with, as typed options: ``CheckOptions`` (the model, the threshold, the
suggestions), which ``citeworth check`` builds from its command line and ``citeworth lsp`` from an
editor's settings, and ``ReportOptions``, what the command does with the result (a language server
publishes diagnostics instead). Imports nothing heavy: ``check --help`` and the server's start stay
quick."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from citeworth.core.schema import THRESHOLD

SYNTAXES = ("auto", "tex", "md", "txt")
TOP_K = 3


@dataclass(frozen=True)
class CheckOptions:
    model: Path | None = None  # a model folder; None: the best by dev F1 (metrics/models.json)
    threshold: float = THRESHOLD  # an uncited sentence scoring at or above it is a flag
    syntax: str = "auto"  # how to read the inputs: by suffix, or one of tex, md, txt
    suggest: bool = False  # rank the draft's own bibliography for every flag (and cited sentence)
    top_k: int = TOP_K  # suggestions per flag
    bibs: tuple[Path, ...] = ()  # the .bib files of drafts that name none (Markdown, text, stdin)
    corpus: Path | None = None  # also suggest the papers of this paper index
    works: Path | None = None  # then the works of this cited-works index the draft does not cite yet

    def problems(self) -> dict[str, str]:
        """What is wrong with the values, by field name (each front end names the field its way)."""
        found = {}
        if not 0.0 <= self.threshold <= 1.0:
            found["threshold"] = f"must be between 0 and 1 (got {self.threshold})"
        if self.top_k < 1:
            found["top_k"] = f"must be 1 or more (got {self.top_k})"
        return found


@dataclass(frozen=True)
class ReportOptions:
    format: str = "gnu"  # gnu, jsonl or sarif
    output: Path | None = None  # the report's file (written atomically); None: stdout
    fail_on: int = 0  # exit 1 when there are more flags than this
    baseline: Path | None = None  # flags it holds are not reported
    write_baseline: Path | None = None  # save every current flag as the baseline
