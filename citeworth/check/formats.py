"""Reports of a check: GNU lines (editors' quickfix lists), JSON lines, SARIF 2.1.0 (code scanning).

- ``gnu``: ``file:line:col: warning: sentence may need a citation (score 0.87) [CW001]``, one line
  per reported flag (flagged, not suppressed, not in the baseline).
- ``jsonl``: one object per sentence: ``file``, ``line``, ``column``, ``end`` (``line``,
  ``column`` one past the last character), ``text`` (as the model read it), ``score``, ``status``
  (``cited``, ``flagged``, ``ok``; ``suppressed`` / ``baselined`` for a flag silenced by a comment
  or the baseline) and ``fingerprint``.
- ``sarif``: one run, one rule (CW001), a result per reported flag with its region (columns in
  Unicode code points) and a partial fingerprint of the sentence text, so code scanning keeps an
  alert's identity when lines move. Suppressed and baselined flags are left out: GitHub code
  scanning shows a SARIF ``suppressions`` entry as an open alert.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from urllib.parse import quote

from citeworth.check.draft import FLAGGED, Sentence
from citeworth.core.io import dumps

RULE_ID = "CW001"
MESSAGE = "sentence may need a citation"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "citeworthSentenceText/v1"
RULE = {
    "id": RULE_ID,
    "name": "SentenceMayNeedCitation",
    "shortDescription": {"text": "Sentence may need a citation"},
    "fullDescription": {
        "text": "A sentence of running text that a cite-worthiness model (CiteWorth, Wright & Augenstein "
        "2021) scores at or above the threshold and that carries no citation."
    },
    "help": {
        "text": "Cite a source for the claim, or rephrase it as your own finding. To silence one sentence, "
        "put '% citeworth: ignore' (LaTeX) or '<!-- citeworth: ignore -->' (Markdown) before it; "
        "'% citeworth: off' ... '% citeworth: on' silences a stretch."
    },
    "defaultConfiguration": {"level": "warning"},
}


def gnu_lines(sentences: Sequence[Sentence]) -> list[str]:
    return [f"{s.file}:{s.line}:{s.column}: warning: {MESSAGE} (score {s.score:.2f}) [{RULE_ID}]"
            for s in sentences if s.status == FLAGGED]


def jsonl_lines(sentences: Sequence[Sentence]) -> list[str]:
    return [dumps({"file": s.file, "line": s.line, "column": s.column,
                   "end": {"line": s.end_line, "column": s.end_column}, "text": s.text,
                   "score": None if s.score is None else round(s.score, 4), "status": s.status,
                   "fingerprint": s.fingerprint})
            for s in sentences]


def sarif_log(sentences: Sequence[Sentence], notifications: Sequence[str], threshold: float,
              model: str) -> dict:
    """A SARIF 2.1.0 log; ``notifications``: problems with inputs (unreadable files, missing inputs)."""
    results = [_result(s) for s in sentences if s.status == FLAGGED]
    invocation = {
        "executionSuccessful": True,
        "toolExecutionNotifications": [{"level": "warning", "message": {"text": text}}
                                       for text in notifications],
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "citeworth", "semanticVersion": _version(), "rules": [RULE]}},
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": results,
            "properties": {"threshold": threshold, "model": model},
        }],
    }


def _result(sentence: Sentence) -> dict:
    region = {"startLine": sentence.line, "startColumn": sentence.column,
              "endLine": sentence.end_line, "endColumn": sentence.end_column}
    return {
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "warning",
        "message": {"text": f"Sentence may need a citation (score {sentence.score:.2f}): {sentence.text}"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": quote(sentence.file)},
                                            "region": region}}],
        "partialFingerprints": {FINGERPRINT_KEY: sentence.fingerprint},
        "properties": {"score": round(sentence.score, 4)},
    }


def _version() -> str:
    try:
        return importlib.metadata.version("citeworth")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"
